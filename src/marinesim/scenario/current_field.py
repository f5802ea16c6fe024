"""Current-field files named by a scenario or a ``.moos`` configuration (``.cfd``).

Layer L3: the pure parser lives in L1 (:class:`marinesim.environment.current.CurrentField`);
this module opens the file.  The scenario loader uses it for ``environment.current.file`` and
for ``current_field`` in a uSimMarine block; ``interop.moos.files`` re-exports it for
``.moos`` files (interop may import scenario, not the other way round).
"""

from __future__ import annotations

from pathlib import Path

from marinesim.core.errors import ConfigError, ConfigWarning
from marinesim.core.textio import read_input_text
from marinesim.environment.current import CurrentField

__all__ = ["load_current_field"]


def load_current_field(
    path: str | Path,
    *,
    file: str | Path | None = None,
    line: int | None = None,
    param: str = "current_field",
) -> tuple[CurrentField, list[ConfigWarning]]:
    """Read and parse a ``.cfd`` current-field file.

    Parameters
    ----------
    path : str or Path
        The ``.cfd`` file.
    file, line, param
        Where the file was named (the configuration line), for errors.

    Returns
    -------
    (CurrentField, list of ConfigWarning)
        The field, and one warning per bad line of the ``.cfd`` file.

    Raises
    ------
    ConfigError
        Missing, unreadable or empty file, naming the configuration file, line and parameter.
    """
    p = Path(path)
    text = read_input_text(
        p,
        what="current-field file",
        ref_file=file,
        ref_line=line,
        param=param if (file is not None or line is not None) else None,
    )
    if not text.strip():
        raise ConfigError(
            f"current-field file {str(p)!r} is empty", file=file, line=line, param=param
        )
    return CurrentField.parse(text, file=p)
