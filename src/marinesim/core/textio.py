"""Reading input files safely: path checks, size limits, strict decoding, gzip, safe YAML.

Every loader of marinesim reads its file through this module, so that every kind of input
fails the same way: a :class:`~marinesim.core.errors.ConfigError` (or ``DataError``) naming
the file and, for bytes that are not text, the first bad byte's offset, line and column.

Limits (documented in the README, section "Input limits and error handling")
----------------------------------------------------------------------------
``MAX_INPUT_BYTES``
    Largest input file read (64 MiB; parameter ``max_input_bytes``, environment variable
    ``MARINESIM_MAX_INPUT_BYTES``).  Also the largest decompressed size of a ``.gz`` file.
``YAML_MAX_BYTES``
    Largest YAML document (128 KiB; parameter ``yaml.max_bytes``): scenario, layout and
    actuator files are a few KiB, and parsing YAML costs about 10 s per MiB.
``YAML_MAX_DEPTH``
    Deepest nesting of YAML mappings and lists (100; parameter ``yaml.max_depth``).
``YAML_MAX_ALIASES``
    Most alias uses (``*name``) in one YAML document (1000; parameter ``yaml.max_aliases``).
``YAML_MAX_NODES``
    Most nodes of a YAML document once its aliases are expanded (200 000; parameter
    ``yaml.max_nodes``) — this is what stops "billion laughs" documents.
``XML_MAX_DEPTH``
    Deepest element nesting of an XML file (100; parameter ``xml.max_depth``).
"""

from __future__ import annotations

import codecs
import math
import os
import zlib
from pathlib import Path
from typing import Any

from marinesim.core.errors import ConfigError, DataError

__all__ = [
    "MAX_INPUT_BYTES",
    "XML_MAX_DEPTH",
    "YAML_MAX_ALIASES",
    "YAML_MAX_BYTES",
    "YAML_MAX_DEPTH",
    "YAML_MAX_NODES",
    "SafeYamlLoader",  # noqa: F822 - lazy (__getattr__)
    "check_finite",
    "check_input_path",
    "decode_text",
    "gunzip",
    "max_input_bytes",
    "read_input_bytes",
    "read_input_text",
    "split_quoted",
    "yaml_compose",  # noqa: F822
    "yaml_construct",  # noqa: F822
    "yaml_load",  # noqa: F822
]

#: The safe YAML reading, in :mod:`marinesim.core.yamlsafe` (imported on first use: PyYAML
#: costs about 20 ms of start-up that the readers of plain text, e.g. ``marinesim moos``,
#: do not need).
_YAML_NAMES = ("SafeYamlLoader", "yaml_compose", "yaml_construct", "yaml_load")


def __getattr__(name: str) -> Any:
    if name in _YAML_NAMES:
        from marinesim.core import yamlsafe

        return getattr(yamlsafe, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Default largest input file [bytes] (see :func:`max_input_bytes`).
MAX_INPUT_BYTES = 64 * 1024 * 1024
#: Largest YAML document [bytes of UTF-8 text].
YAML_MAX_BYTES = 128 * 1024
#: Deepest nesting of YAML collections.
YAML_MAX_DEPTH = 100
#: Most alias uses in one YAML document.
YAML_MAX_ALIASES = 1000
#: Most nodes of a YAML document with its aliases expanded.
YAML_MAX_NODES = 200_000
#: Deepest XML element nesting.
XML_MAX_DEPTH = 100

_ENV_MAX = "MARINESIM_MAX_INPUT_BYTES"

_ErrorType = type[ConfigError] | type[DataError]


def max_input_bytes() -> int:
    """The input size limit [bytes]: ``MARINESIM_MAX_INPUT_BYTES`` or :data:`MAX_INPUT_BYTES`.

    Raises
    ------
    ConfigError
        The environment variable is not a positive integer.
    """
    raw = os.environ.get(_ENV_MAX)
    if raw is None or not raw.strip():
        return MAX_INPUT_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"must be a positive whole number of bytes, got {raw!r}", param=_ENV_MAX)
    return value


def _fail(
    error: _ErrorType,
    message: str,
    path: Path,
    ref_file: str | Path | None,
    ref_line: int | None,
    param: str | None,
) -> ConfigError | DataError:
    """An error about ``path``: located at the referring line when there is one."""
    if ref_file is not None or param is not None:
        return error(f"{message}: {str(path)!r}", file=ref_file, line=ref_line, param=param)
    return error(message, file=path)


def check_input_path(
    path: str | Path,
    *,
    what: str = "input file",
    error: _ErrorType = ConfigError,
    ref_file: str | Path | None = None,
    ref_line: int | None = None,
    param: str | None = None,
) -> Path:
    """Check that ``path`` names an existing, readable regular file; return it as a Path.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What the file is, in words (``"current-field file"``), used in messages.
    error : ConfigError or DataError
        Error class raised.
    ref_file, ref_line, param : optional
        Where the path was named (a configuration line); errors are then located there and
        the message quotes the path.

    Raises
    ------
    ConfigError or DataError
        ``... not found``, ``... is a directory, not a file``, ``... is not a regular file``,
        ``cannot read ...: permission denied``.
    """
    p = Path(path)
    try:
        if not p.exists():
            raise _fail(error, f"{what} not found", p, ref_file, ref_line, param)
        if p.is_dir():
            raise _fail(error, f"{what} is a directory, not a file", p, ref_file, ref_line, param)
        if not p.is_file():
            raise _fail(error, f"{what} is not a regular file", p, ref_file, ref_line, param)
    except OSError as exc:  # a path too long, a loop of links...
        raise _fail(
            error, f"cannot access {what} ({exc.strerror or exc})", p, ref_file, ref_line, param
        ) from None
    if not os.access(p, os.R_OK):
        raise _fail(error, f"cannot read {what}: permission denied", p, ref_file, ref_line, param)
    return p


def read_input_bytes(
    path: str | Path,
    *,
    what: str = "input file",
    error: _ErrorType = ConfigError,
    ref_file: str | Path | None = None,
    ref_line: int | None = None,
    param: str | None = None,
    limit: int | None = None,
    gz: bool | None = None,
) -> bytes:
    """Check the path, then read its bytes, no more than the size limit.

    Parameters
    ----------
    path, what, error, ref_file, ref_line, param
        See :func:`check_input_path`.
    limit : int, optional
        Size limit [bytes] (default :func:`max_input_bytes`).
    gz : bool, optional
        Decompress gzip (default: when the name ends in ``.gz``); the decompressed size is
        bounded by the same limit.

    Raises
    ------
    ConfigError or DataError
        Path problems, a file over the limit (``max_input_bytes``), a corrupt gzip stream.
    """
    p = check_input_path(
        path, what=what, error=error, ref_file=ref_file, ref_line=ref_line, param=param
    )
    cap = max_input_bytes() if limit is None else limit
    try:
        size = p.stat().st_size
        if size > cap:
            raise error(
                f"{what} is {size} bytes, over the input size limit of {cap} bytes "
                f"(max_input_bytes; raise it with {_ENV_MAX})",
                file=p,
                param="max_input_bytes",
            )
        with p.open("rb") as fh:
            raw = fh.read(cap + 1)
    except OSError as exc:
        raise _fail(
            error, f"cannot read {what} ({exc.strerror or exc})", p, ref_file, ref_line, param
        ) from None
    if len(raw) > cap:
        raise error(
            f"{what} is over the input size limit of {cap} bytes (max_input_bytes)",
            file=p,
            param="max_input_bytes",
        )
    if gz if gz is not None else p.name.lower().endswith(".gz"):
        raw = gunzip(raw, file=p, error=error, limit=cap)
    return raw


def gunzip(
    data: bytes,
    *,
    file: str | Path | None = None,
    error: _ErrorType = DataError,
    limit: int | None = None,
) -> bytes:
    """Decompress gzip data with a bound on the output size.

    Raises
    ------
    ConfigError or DataError
        Not gzip, truncated or corrupt data, or more than ``limit`` bytes of output.
    """
    cap = max_input_bytes() if limit is None else limit
    if data[:2] != b"\x1f\x8b":
        raise error("not a gzip file (no gzip header at offset 0)", file=file)
    out = bytearray()
    rest = data
    try:
        while rest:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            buf = rest
            while buf:
                out += d.decompress(buf, cap + 1 - len(out))
                if len(out) > cap:
                    raise error(
                        f"gzip data expands to more than {cap} bytes (max_input_bytes)",
                        file=file,
                        param="max_input_bytes",
                    )
                buf = d.unconsumed_tail
            if not d.eof:
                raise error("gzip data is truncated (ends before the stream does)", file=file)
            rest = d.unused_data.lstrip(b"\x00")  # concatenated members, trailing padding
            if rest and rest[:2] != b"\x1f\x8b":
                raise error("trailing garbage after the gzip data", file=file)
    except zlib.error as exc:
        raise error(f"corrupt gzip data ({exc})", file=file) from None
    return bytes(out)


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    return line, offset - start + 1


def decode_text(
    data: bytes, *, file: str | Path | None = None, error: _ErrorType = ConfigError
) -> str:
    """Decode UTF-8 (a leading byte-order mark is dropped); name the first bad byte otherwise.

    Raises
    ------
    ConfigError or DataError
        UTF-16/UTF-32 text (by its byte-order mark), a NUL byte (binary data or UTF-16 without
        a mark) or invalid UTF-8, located ``file:line:column`` with the byte offset.
    """
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    for bom, name in (
        (codecs.BOM_UTF32_LE, "UTF-32"),
        (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"),
        (codecs.BOM_UTF16_BE, "UTF-16"),
    ):
        if data.startswith(bom):
            raise error(
                f"the file is {name} text (byte-order mark at offset 0); save it as UTF-8",
                file=file,
                line=1,
                column=1,
            )
    nul = data.find(b"\x00")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
        if 0 <= nul < bad:
            bad = nul
        line, col = _line_col(data, bad)
        raise error(
            f"not UTF-8 text: byte 0x{data[bad]:02x} at offset {bad} "
            f"(line {line}, column {col}); save the file as UTF-8",
            file=file,
            line=line,
            column=col,
        ) from None
    if nul >= 0:
        line, col = _line_col(data, nul)
        raise error(
            f"NUL byte at offset {nul} (line {line}, column {col}): binary data or UTF-16 "
            "text, not UTF-8 text",
            file=file,
            line=line,
            column=col,
        )
    return text


def read_input_text(
    path: str | Path,
    *,
    what: str = "input file",
    error: _ErrorType = ConfigError,
    ref_file: str | Path | None = None,
    ref_line: int | None = None,
    param: str | None = None,
    limit: int | None = None,
    gz: bool | None = None,
) -> str:
    """:func:`read_input_bytes` then :func:`decode_text` (errors located in the file)."""
    raw = read_input_bytes(
        path,
        what=what,
        error=error,
        ref_file=ref_file,
        ref_line=ref_line,
        param=param,
        limit=limit,
        gz=gz,
    )
    return decode_text(raw, file=Path(path), error=error)


def check_finite(
    value: Any,
    *,
    param: str,
    file: str | Path | None = None,
    line: int | None = None,
    column: int | None = None,
    error: _ErrorType = ConfigError,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
) -> float:
    """A real number (not a bool) that is finite and within [low, high]; else a located error."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(
            f"expected a number, got {type(value).__name__} {value!r}",
            file=file,
            line=line,
            column=column,
            param=param,
        )
    try:
        v = float(value)
    except OverflowError:
        v = math.inf
    if not math.isfinite(v):
        raise error(f"must be finite, got {value!r}", file=file, line=line, column=column,
                    param=param)  # fmt: skip
    if low is not None and (v < low or (v == low and not low_inclusive)):
        op = ">=" if low_inclusive else ">"
        raise error(f"must be {op} {low:g}, got {v:g}", file=file, line=line, column=column,
                    param=param)  # fmt: skip
    if high is not None and v > high:
        raise error(f"must be <= {high:g}, got {v:g}", file=file, line=line, column=column,
                    param=param)  # fmt: skip
    return v


def split_quoted(text: str, sep: str = ",") -> list[str]:
    """Split ``text`` at ``sep`` outside double quotes (the quotes are kept), as MOOS
    configuration values are split: ``'a,"b,c",d'`` → ``['a', '"b,c"', 'd']``."""
    out: list[str] = []
    cur: list[str] = []
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
            cur.append(ch)
        elif ch == sep and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out
