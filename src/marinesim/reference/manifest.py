"""The ``files`` table of a reference case's ``manifest.json`` (kinds ``actuators``, ``pvs``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from marinesim.core.errors import DataError

__all__ = ["manifest_files"]


def manifest_files(manifest: Path, what: str = "manifest") -> dict[str, Any]:
    """Read ``manifest`` (a JSON object) and return its non-empty ``files`` mapping.

    Parameters
    ----------
    manifest : Path
        The ``manifest.json`` file.
    what : str
        How messages name the file (``"actuator manifest"``...).

    Returns
    -------
    dict
        File name → its entry, in manifest order.

    Raises
    ------
    DataError
        Unreadable file, invalid JSON, not an object, no ``files``.
    """
    from marinesim.core.textio import read_input_text

    text = read_input_text(manifest, what=what, error=DataError)
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DataError(f"cannot read {what}: {exc}", file=manifest) from None
    if not isinstance(data, dict):
        raise DataError("the manifest must hold a JSON object", file=manifest)
    files = data.get("files")
    if not isinstance(files, dict) or not files:
        raise DataError("manifest has no 'files'", file=manifest, param="files")
    return files
