"""Reading MOOS mission files (``.moos``) the way MOOS does.

* ``//`` starts a comment (to the end of the line); blank lines are ignored.
* Outside blocks, ``NAME = VALUE`` lines are globals (``LatOrigin``, ``LongOrigin``,
  ``MOOSTimeWarp``, ``ServerHost`` …); names are case-insensitive.
* ``ProcessConfig = NAME`` followed by ``{ … }`` is an application's block; the block name is
  matched case-insensitively and the first block of a name is the one an application reads.
* Inside a block every ``key = value`` line is kept with its line number; the blank deletion,
  empty-value and key-case rules of the application are applied by
  :func:`marinesim.models.usm.config.configure`.
* ``#include`` / ``#define`` (nsplug directives) are not expanded: run ``nsplug`` first.

Example
-------
>>> mf = MoosFile.parse("LatOrigin = 42\\nProcessConfig = uSimMarine\\n{\\n prefix = NAV\\n}\\n")
>>> mf.block("usimmarine").entries
[('prefix', 'NAV', 4)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from marinesim.core.errors import ConfigError, ConfigWarning

__all__ = ["MoosBlock", "MoosFile", "read_moos_file", "strip_comment"]


def strip_comment(line: str) -> str:
    """Remove a ``//`` comment and blank ends."""
    pos = line.find("//")
    if pos >= 0:
        line = line[:pos]
    return line.strip()


@dataclass(frozen=True)
class MoosBlock:
    """One ``ProcessConfig = NAME { … }`` block.

    Attributes
    ----------
    name : str
        Block (application) name as written.
    line : int
        Line of the ``ProcessConfig`` line.
    entries : list of (key, value, line)
        Lines in file order, comments removed, key and value blank-trimmed.
    """

    name: str
    line: int
    entries: list[tuple[str, str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class MoosFile:
    """A parsed ``.moos`` file.

    Attributes
    ----------
    path : str or None
        File name used in messages.
    globals : dict
        Global name → (value, line), names as written; look up with :meth:`global_value`.
    blocks : list of MoosBlock
        Every block in file order.
    warnings : list of ConfigWarning
        Oddities found while reading (duplicate blocks, stray lines).
    """

    path: str | None
    globals: dict[str, tuple[str, int]]
    blocks: list[MoosBlock]
    warnings: list[ConfigWarning] = field(default_factory=list)

    @classmethod
    def parse(cls, text: str, *, path: str | Path | None = None) -> MoosFile:
        """Parse the text of a ``.moos`` file.

        Raises
        ------
        ConfigError
            An unterminated block, a missing ``{``, a stray ``}`` or an nsplug directive,
            naming file and line.
        """
        fname = str(path) if path is not None else None
        gl: dict[str, tuple[str, int]] = {}
        blocks: list[MoosBlock] = []
        warns: list[ConfigWarning] = []
        current: MoosBlock | None = None
        pending: tuple[str, int] | None = None  # ProcessConfig seen, waiting for '{'
        for lineno, raw in enumerate(text.splitlines(), start=1):
            line = strip_comment(raw)
            if not line:
                continue
            if line.startswith("#"):
                raise ConfigError(
                    f"nsplug directive {line.split()[0]!r} is not expanded by marinesim; "
                    "run nsplug on the file first",
                    file=fname,
                    line=lineno,
                )
            if pending is not None:
                if line.startswith("{"):
                    current = MoosBlock(pending[0], pending[1])
                    blocks.append(current)
                    pending = None
                    line = line[1:].strip()
                    if not line:
                        continue
                else:
                    raise ConfigError(
                        f"expected '{{' after 'ProcessConfig = {pending[0]}' (line {pending[1]})",
                        file=fname,
                        line=lineno,
                    )
            if current is not None:
                if line.startswith("}"):
                    current = None
                    rest = line[1:].strip()
                    if rest:
                        warns.append(
                            ConfigWarning(
                                f"text after '}}' ignored: {rest!r}", file=fname, line=lineno
                            )
                        )
                    continue
                key, sep, value = line.partition("=")
                if not sep:
                    warns.append(
                        ConfigWarning(
                            f"line {line!r} in block {current.name!r} has no '='; ignored",
                            file=fname,
                            line=lineno,
                        )
                    )
                    continue
                current.entries.append((key.strip(), value.strip(), lineno))
                continue
            if line.startswith("}") or line.startswith("{"):
                raise ConfigError(
                    f"unexpected {line[0]!r} outside a block", file=fname, line=lineno
                )
            key, sep, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if not sep:
                warns.append(
                    ConfigWarning(f"line {line!r} has no '='; ignored", file=fname, line=lineno)
                )
                continue
            if key.lower() == "processconfig":
                name = value
                if name.endswith("{"):
                    name = name[:-1].strip()
                    current = MoosBlock(name, lineno)
                    blocks.append(current)
                else:
                    pending = (name, lineno)
                continue
            if any(k.lower() == key.lower() for k in gl):
                warns.append(
                    ConfigWarning(
                        f"global {key!r} given again; the first value is used",
                        file=fname,
                        line=lineno,
                        param=key,
                    )
                )
                continue
            gl[key] = (value, lineno)
        if pending is not None:
            raise ConfigError(
                f"'ProcessConfig = {pending[0]}' has no block", file=fname, line=pending[1]
            )
        if current is not None:
            raise ConfigError(
                f"block {current.name!r} is not closed with '}}'", file=fname, line=current.line
            )
        seen: set[str] = set()
        for b in blocks:
            if b.name.lower() in seen:
                warns.append(
                    ConfigWarning(
                        f"second 'ProcessConfig = {b.name}' block ignored (the first is used)",
                        file=fname,
                        line=b.line,
                    )
                )
            seen.add(b.name.lower())
        return cls(fname, gl, blocks, warns)

    def global_value(self, name: str) -> str | None:
        """Value of a global, case-insensitive (None when absent)."""
        for key, (value, _line) in self.globals.items():
            if key.lower() == name.lower():
                return value
        return None

    def globals_dict(self) -> dict[str, str]:
        """Globals as name → value."""
        return {k: v for k, (v, _line) in self.globals.items()}

    def block_names(self) -> list[str]:
        """Names of the blocks in file order."""
        return [b.name for b in self.blocks]

    def find_block(self, name: str) -> MoosBlock | None:
        """The first block named ``name`` (case-insensitive), or None."""
        for b in self.blocks:
            if b.name.lower() == name.lower():
                return b
        return None

    def block(self, name: str) -> MoosBlock:
        """The first block named ``name`` (case-insensitive).

        Raises
        ------
        ConfigError
            No such block; the message lists the blocks present.
        """
        b = self.find_block(name)
        if b is None:
            names = ", ".join(self.block_names()) or "none"
            raise ConfigError(
                f"no 'ProcessConfig = {name}' block (blocks: {names})", file=self.path
            )
        return b


def read_moos_file(path: str | Path) -> MoosFile:
    """Read and parse a ``.moos`` file.

    Raises
    ------
    ConfigError
        The file is missing or unreadable, or malformed (see :meth:`MoosFile.parse`).
    """
    from marinesim.core.textio import read_input_text

    p = Path(path)
    text = read_input_text(p, what="file")
    return MoosFile.parse(text, path=p)
