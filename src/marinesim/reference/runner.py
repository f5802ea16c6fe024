"""Discovery and replay of reference cases (``marinesim verify``).

A *case* is one output of a real peer program with its inputs (see the shipped
``reference/data/README.md``).  Kinds are recognised from the files:

* ``*.scenario.json`` with ``provenance.program`` = ``uSimMarine`` / ``uSimMarineV22`` →
  :mod:`marinesim.reference.usm`;
* a folder whose ``manifest.json`` has ``files`` of UUV Simulator actuator kinds →
  :mod:`marinesim.reference.actuators`;
* a folder whose ``manifest.json`` has ``loop_semantics`` → :mod:`marinesim.reference.pvs`.

Each kind module exposes ``verify_path(path: Path) -> list[CaseResult]`` for a case file or
a folder of its kind.  A case that cannot be run fails with its message; it is never skipped.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from marinesim.core.errors import DataError

__all__ = [
    "CaseResult",
    "ColumnResult",
    "discover",
    "ignored_manifests",
    "shipped_root",
    "verify",
]


@dataclass
class ColumnResult:
    """Comparison of one output column: largest error and its tolerance."""

    column: str
    max_error: float
    tolerance: float
    passed: bool
    note: str = ""


@dataclass
class CaseResult:
    """Outcome of one reference case."""

    kind: str
    case: str
    path: str
    columns: list[ColumnResult] = field(default_factory=list)
    message: str = ""
    error: bool = False

    @property
    def passed(self) -> bool:
        """True when the case ran and every compared column is within tolerance."""
        return (not self.error) and bool(self.columns) and all(c.passed for c in self.columns)

    @property
    def worst(self) -> ColumnResult | None:
        """The column with the largest error relative to its tolerance."""
        if not self.columns:
            return None
        return max(self.columns, key=lambda c: (not c.passed, c.max_error / c.tolerance if c.tolerance else c.max_error))


#: kind name -> module implementing ``verify_path``
KIND_MODULES = {
    "usm": "marinesim.reference.usm",
    "actuators": "marinesim.reference.actuators",
    "pvs": "marinesim.reference.pvs",
}


def shipped_root() -> Path:
    """Folder of the reference cases shipped inside the package."""
    return Path(str(resources.files("marinesim.reference") / "data"))


def _open_text(path: Path) -> str:
    from marinesim.core.textio import read_input_text

    return read_input_text(path, what="reference file", error=DataError, gz=path.suffix == ".gz")


def _manifest_kind(manifest: Path) -> str | None:
    try:
        data = json.loads(_open_text(manifest))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise DataError(f"cannot read reference manifest: {exc}", file=manifest) from None
    if not isinstance(data, dict):
        raise DataError("the manifest must hold a JSON object", file=manifest)
    if "loop_semantics" in data:
        return "pvs"
    files = data.get("files")
    if isinstance(files, dict) and files:
        entries = list(files.values())
        if all(isinstance(e, dict) and isinstance(e.get("kind"), str) for e in entries):
            return "actuators"
    return None


def ignored_manifests(paths: Iterable[Path]) -> list[Path]:
    """``manifest.json`` files under ``paths`` that are not of a format ``verify`` replays
    (e.g. recordings documented in their own README); they are reported, not replayed."""
    out = []
    for root in paths:
        root = Path(root)
        found = [root] if root.is_file() else sorted(root.rglob("manifest.json"))
        out += [m for m in found if m.name == "manifest.json" and _manifest_kind(m) is None]
    return out


def discover(paths: Iterable[Path]) -> list[tuple[str, Path]]:
    """List (kind, path) units to verify under the given files and folders (sorted, unique)."""
    units: list[tuple[str, Path]] = []
    for root in paths:
        root = Path(root)
        if not root.exists():
            raise DataError("no such file or folder", file=root)
        if root.is_file():
            if root.name == "manifest.json":
                kind = _manifest_kind(root)
                if kind:
                    units.append((kind, root.parent))
                continue
            if root.name.endswith(".scenario.json"):
                units.append(("usm", root))
                continue
            raise DataError("not a reference case (expected NAME.scenario.json or manifest.json)", file=root)
        for manifest in sorted(root.rglob("manifest.json")):
            kind = _manifest_kind(manifest)
            if kind:
                units.append((kind, manifest.parent))
        for scen in sorted(root.rglob("*.scenario.json")):
            units.append(("usm", scen))
    seen: set[tuple[str, Path]] = set()
    out = []
    for u in units:
        key = (u[0], u[1].resolve())
        if key not in seen:
            seen.add(key)
            out.append(u)
    return out


def verify(paths: Sequence[Path] | None = None) -> list[CaseResult]:
    """Replay every reference case under ``paths`` (default: the shipped cases).

    Returns
    -------
    list of CaseResult
        One per case, in discovery order.  Failures to run are results with ``error=True``.
    """
    roots = list(paths) if paths else [shipped_root()]
    results: list[CaseResult] = []
    for kind, path in discover(roots):
        module = importlib.import_module(KIND_MODULES[kind])
        try:
            results.extend(module.verify_path(path))
        except Exception as exc:  # a case that cannot run fails, with its reason
            results.append(
                CaseResult(kind, path.name, str(path), message=f"{type(exc).__name__}: {exc}", error=True)
            )
    return results
