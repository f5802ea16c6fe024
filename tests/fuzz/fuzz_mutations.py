"""Mutations of an input file's bytes: encodings, garbage, truncation, types, numbers, nesting.

Each operator is ``op(data, rnd) -> bytes`` with a seeded :class:`random.Random`, so a
hypothesis strategy drawing ``(operator, seed)`` pairs is deterministic and shrinks well.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

EXTREME_NUMBERS = [
    "0", "-0", "-1", "-1e-9", "1e-9", "1e-12", "1e308", "-1e308", "1e309", "-1e309", "nan",
    "NaN", "inf", "-inf", ".inf", "-.inf", "1" + "0" * 400, "-" + "9" * 400, "0x10", "1e",
    "4294967296", "-2147483649", "1e-320", "123456789012345678901234567890", "1_000",
]  # fmt: skip
WRONG_TYPES = [
    "true", "false", "null", "~", "[]", "{}", "[1, 2]", "{a: 1}", "''", '""', "abc", "x=1",
    "1:2", "-", ".", ",", "[[[[[[1]]]]]]", "&a 1", "*a", "!!binary AAAA", "!!python/object:os.system",
    "1.5.2", "é", "\t", "\\", "%", "#", "'",
]  # fmt: skip

_NUM = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_VALUE = re.compile(rb"(?<=[:=])[ \t]*[^,\n\r}\]]*")
_WORD = re.compile(rb"[A-Za-z_][A-Za-z_0-9]{2,}")

Op = Callable[[bytes, random.Random], bytes]


def _pick(pattern: re.Pattern[bytes], data: bytes, rnd: random.Random) -> re.Match[bytes] | None:
    hits = list(pattern.finditer(data))
    return rnd.choice(hits) if hits else None


def _splice(data: bytes, m: re.Match[bytes] | None, new: bytes, rnd: random.Random) -> bytes:
    if m is None:
        i = rnd.randrange(len(data) + 1)
        return data[:i] + new + data[i:]
    return data[: m.start()] + new + data[m.end() :]


def extreme_number(data: bytes, rnd: random.Random) -> bytes:
    """Replace one number with an extreme or invalid one."""
    return _splice(data, _pick(_NUM, data, rnd), rnd.choice(EXTREME_NUMBERS).encode(), rnd)


def many_numbers(data: bytes, rnd: random.Random) -> bytes:
    """Replace every number with one extreme value."""
    new = rnd.choice(EXTREME_NUMBERS).encode()
    return _NUM.sub(lambda m: new, data)


def wrong_type(data: bytes, rnd: random.Random) -> bytes:
    """Replace one value (after ':' or '=') with a value of another type."""
    new = rnd.choice(WRONG_TYPES + EXTREME_NUMBERS).encode()
    return _splice(data, _pick(_VALUE, data, rnd), b" " + new, rnd)


def misspell(data: bytes, rnd: random.Random) -> bytes:
    """Change one letter of one identifier (a misspelt key or name)."""
    m = _pick(_WORD, data, rnd)
    if m is None:
        return data
    word = bytearray(m.group())
    i = rnd.randrange(len(word))
    word[i] = rnd.choice(b"aeiouxz_")
    return data[: m.start()] + bytes(word) + data[m.end() :]


def truncate(data: bytes, rnd: random.Random) -> bytes:
    """Cut the file anywhere."""
    return data[: rnd.randrange(len(data) + 1)]


def flip_byte(data: bytes, rnd: random.Random) -> bytes:
    """Set one byte to a random value (often not UTF-8)."""
    if not data:
        return bytes([rnd.randrange(256)])
    i = rnd.randrange(len(data))
    return data[:i] + bytes([rnd.randrange(256)]) + data[i + 1 :]


def insert_garbage(data: bytes, rnd: random.Random) -> bytes:
    """Insert a run of random bytes."""
    i = rnd.randrange(len(data) + 1)
    junk = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 40)))
    return data[:i] + junk + data[i:]


def binary_garbage(data: bytes, rnd: random.Random) -> bytes:
    """Replace the whole file with random bytes."""
    return bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 2000)))


def utf16(data: bytes, rnd: random.Random) -> bytes:
    """Re-encode the text as UTF-16 or UTF-32 (with or without a byte-order mark)."""
    text = data.decode("utf-8", errors="replace")
    return text.encode(rnd.choice(["utf-16", "utf-16-le", "utf-16-be", "utf-32"]))


def latin1(data: bytes, rnd: random.Random) -> bytes:
    """Add a Latin-1 comment character (not UTF-8)."""
    i = rnd.randrange(len(data) + 1)
    return data[:i] + rnd.choice([b"\xb0", b"\xe9", b"\xff", b"\xfe\xff", b"\xc3"]) + data[i:]


def duplicate_line(data: bytes, rnd: random.Random) -> bytes:
    """Repeat one line right after itself (duplicated keys and parameters)."""
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    i = rnd.randrange(len(lines))
    return b"".join([*lines[: i + 1], lines[i], *lines[i + 1 :]])


def delete_line(data: bytes, rnd: random.Random) -> bytes:
    """Drop one line."""
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    i = rnd.randrange(len(lines))
    return b"".join(lines[:i] + lines[i + 1 :])


def repeat_line(data: bytes, rnd: random.Random) -> bytes:
    """Repeat one line thousands of times (sizes)."""
    lines = data.splitlines(keepends=True)
    if not lines:
        return data * 1000
    i = rnd.randrange(len(lines))
    line = lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n"
    return b"".join(lines[:i] + [line] * rnd.choice([100, 3000, 20000]) + lines[i + 1 :])


def long_line(data: bytes, rnd: random.Random) -> bytes:
    """Make one value enormous (a list of thousands of items, or one huge token)."""
    m = _pick(_VALUE, data, rnd)
    item = rnd.choice([b"1,", b"20:1, ", b"a", b"9", b"[1],"])
    return _splice(data, m, b" " + item * rnd.choice([1000, 30000]), rnd)


def deep_nesting(data: bytes, rnd: random.Random) -> bytes:
    """Insert deeply nested brackets, mappings or XML elements."""
    depth = rnd.choice([50, 150, 1000, 20000])
    kind = rnd.randrange(4)
    if kind == 0:
        new = b"[" * depth + b"1" + b"]" * depth
    elif kind == 1:
        new = b"{a: " * depth + b"1" + b"}" * depth
    elif kind == 2:
        new = b"<a>" * depth + b"</a>" * depth
    else:
        new = b"".join(b"  " * k + b"a:\n" for k in range(min(depth, 3000))) + b"  " * depth + b"1"
    return _splice(data, _pick(_VALUE, data, rnd), b" " + new, rnd)


def alias_bomb(data: bytes, rnd: random.Random) -> bytes:
    """Prepend a YAML 'billion laughs' document fragment, or a recursive alias."""
    if rnd.random() < 0.2:
        return b"loop: &l [*l]\n" + data
    levels = rnd.choice([4, 9, 12])
    out = [b"b0: &b0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"]
    for k in range(1, levels):
        refs = b", ".join([b"*b%d" % (k - 1)] * 9)
        out.append(b"b%d: &b%d [%s]\n" % (k, k, refs))
    return b"".join(out) + data


def empty(data: bytes, rnd: random.Random) -> bytes:
    """An empty file, or only white space."""
    return rnd.choice([b"", b"\n", b"   \n\t\n", b"\xef\xbb\xbf"])


OPERATORS: dict[str, Op] = {
    f.__name__: f
    for f in (
        extreme_number,
        many_numbers,
        wrong_type,
        misspell,
        truncate,
        flip_byte,
        insert_garbage,
        binary_garbage,
        utf16,
        latin1,
        duplicate_line,
        delete_line,
        repeat_line,
        long_line,
        deep_nesting,
        alias_bomb,
        empty,
    )
}


def mutate(data: bytes, name: str, seed: int, times: int = 1) -> bytes:
    """Apply operator ``name`` (``times`` times) with a seeded random generator."""
    rnd = random.Random(seed)
    for _ in range(times):
        data = OPERATORS[name](data, rnd)
    return data
