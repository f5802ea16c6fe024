"""Layers (architecture spec §2): the import-linter contracts hold, and no upward edge hides in
a string: ``core`` and ``engine`` name no module of a layer above them, each package's
``registry.toml`` names only that package, and the engine reaches the scenario loader and the
run-log backend by registry kind and name only."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import numpy as np
import pytest

from marinesim.core import registry
from marinesim.core.errors import EngineError
from marinesim.engine.results import RunResult, Signal

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "marinesim"

L1 = ("models", "actuators", "allocation", "environment", "sensors", "control")
L3_UP = ("scenario", "io", "interop", "batch", "testing", "reference", "gym", "api", "cli")
#: package -> the packages above it, whose dotted names it must not hold in a string.
ABOVE = {"core": (*L1, "engine", *L3_UP), "engine": L3_UP}


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                out.add(id(body[0].value))
    return out


def upward_strings(source: str, above: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, text) of each string constant, docstrings aside, naming ``marinesim.<above>``."""
    pattern = re.compile(r"\bmarinesim\.(" + "|".join(above) + r")\b")
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docs
        and pattern.search(node.value)
    ]


def test_scanner_finds_a_hidden_edge_and_skips_docstrings() -> None:
    code = textwrap.dedent(
        '''
        """Docs may mention marinesim.io.log."""
        def save(r):
            """As marinesim.io.log does."""
            return resolve("marinesim.io.log:save_run")(r)
        TABLE = {("x", "y"): f"marinesim.scenario.build:{name}"}
        OK = "marinesim.core.frames:wrap"
        '''
    )
    hits = upward_strings(code, ABOVE["engine"])
    assert sorted(line for line, _ in hits) == [5, 6]


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_no_upper_layer_module_named_in_strings(package: str) -> None:
    found = []
    for path in sorted((SRC / package).rglob("*.py")):
        for line, text in upward_strings(path.read_text(encoding="utf-8"), ABOVE[package]):
            found.append(f"{path.relative_to(ROOT)}:{line}: {text[:80]!r}")
    assert not found, "upward edges hidden in strings:\n" + "\n".join(found)


def test_each_registry_declaration_names_only_its_package() -> None:
    files = sorted(SRC.glob("*/registry.toml"))
    assert {p.parent.name for p in files} >= {"engine", "scenario", "io", "models"}
    assert not (SRC / "core" / "registry.toml").exists()
    for path in files:
        package = f"marinesim.{path.parent.name}"
        for kind, entries in tomllib.loads(path.read_text(encoding="utf-8")).items():
            for name, target in entries.items():
                module = target.partition(":")[0]
                assert module == package or module.startswith(package + "."), (path, kind, name)
                assert registry.get(kind, name) is not None  # the target imports


def test_engine_finds_upper_layers_by_registry_only() -> None:
    """A fresh process importing only the engine loads a scenario and saves / loads a run."""
    code = textwrap.dedent(
        """
        import sys, tempfile
        from marinesim.engine.results import RunResult
        from marinesim.engine.simulation import Simulation
        assert not any(m.startswith(("marinesim.scenario", "marinesim.io")) for m in sys.modules)
        sim = Simulation.from_file("demo_survey", sets=["time.end=1"])
        res = sim.run()
        out = tempfile.mkdtemp()
        res.save(out, fmt="csv")
        again = RunResult.load(out)
        assert again["truth.pos"].shape == res["truth.pos"].shape, again["truth.pos"].shape
        print("ok", res.status)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["ok", "completed"]


def test_missing_run_log_backend_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.names("run_log")  # read the declarations first
    targets = {k: v for k, v in registry._TARGETS.items() if k[0] != "run_log"}
    loaded = {k: v for k, v in registry._LOADED.items() if k[0] != "run_log"}
    monkeypatch.setattr(registry, "_TARGETS", targets)
    monkeypatch.setattr(registry, "_LOADED", loaded)
    res = RunResult(
        np.zeros(2),
        {"truth.pos": Signal(np.zeros((1, 2, 3)), "m", ("north", "east", "down"))},
        [{"id": 0, "name": "a", "block": "a", "index": 0, "team": ""}],
        [],
        [],
        {"status": "completed"},
    )
    with pytest.raises(EngineError, match="no run-log backend provides 'save'"):
        res.save(Path("never-written"))
    with pytest.raises(EngineError, match="no run-log backend provides 'load'"):
        RunResult.load(Path("never-read"))


def test_import_linter_contracts_kept() -> None:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("import-linter is not installed (dev extra)")
    done = subprocess.run(
        [exe, "--no-cache"], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
