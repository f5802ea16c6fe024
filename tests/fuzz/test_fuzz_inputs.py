"""Fuzzing every input kind: mutated files fail cleanly, quickly, and never write non-finite data.

For each kind (``fuzz_kinds.py``) hypothesis mutates the bundled example (``fuzz_mutations.py``:
encodings, binary garbage, truncation, wrong types, extreme numbers, nesting, sizes, alias
bombs) and the loader runs in-process.  Each outcome must be one of:

* a :class:`~marinesim.core.errors.MarinesimError` whose message names the file (a location);
* a documented acceptance: the load succeeds and every number it built is finite.

Never another exception type, never more than :data:`BUDGET_S` seconds.  The command-line
cases run ``marinesim.cli.main.main`` in-process: exit 0, 1 or 2, no traceback, and no ``inf``
or ``nan`` in a file written with exit 0.  ``derandomize=True`` keeps CI stable.
"""

from __future__ import annotations

import contextlib
import io
import math
import signal
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_kinds import all_kinds  # noqa: E402
from fuzz_mutations import OPERATORS, mutate  # noqa: E402

from marinesim.core.errors import MarinesimError  # noqa: E402

KINDS = all_kinds()
OPS = sorted(OPERATORS)
#: Longest a single load may take [s] on a loaded 2-core CI machine.
BUDGET_S = 8.0
#: Hard stop of one load [s] (a hang fails the test instead of blocking the suite).
HARD_STOP_S = 30

FUZZ = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class _Hang(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float):  # noqa: ANN202
    """Raise :class:`_Hang` in the main thread after ``seconds`` (SIGALRM)."""

    def _alarm(signum: int, frame: Any) -> None:
        raise _Hang(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _finite(obj: Any, depth: int = 0) -> bool:
    """Every float in ``obj`` (arrays, tuples, lists, frames) is finite (NaN = blank allowed
    only in pandas frames, where it stands for an empty cell)."""
    if depth > 5:
        return True
    if isinstance(obj, np.ndarray):
        return obj.dtype.kind != "f" or bool(np.all(np.isfinite(obj)))
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, (tuple, list)):
        return all(_finite(v, depth + 1) for v in obj[:200])
    if hasattr(obj, "select_dtypes"):  # a DataFrame: blanks are NaN, infinities are not allowed
        vals = obj.select_dtypes("number").to_numpy(dtype=float)
        return not bool(np.isinf(vals).any())
    return True


def _write(kind: Any, folder: Path, data: bytes) -> Path:
    for name, blob in kind.extra.items():
        (folder / name).write_bytes(blob)
    path = folder / kind.filename
    path.write_bytes(data)
    return path


#: Kinds whose unmutated example has been loaded once (untimed) in this process.
_WARMED: set[str] = set()


def _warm(kind_name: str) -> None:
    """Load the unmutated example once, untimed: a first load may compile numba kernels
    (tens of seconds with a cold cache on a loaded machine), which is start-up cost, not the
    mutated input's."""
    if kind_name in _WARMED:
        return
    kind = KINDS[kind_name]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kind.load(_write(kind, Path(tmp), kind.example))
    _WARMED.add(kind_name)


def _check_load(kind_name: str, data: bytes) -> None:
    kind = KINDS[kind_name]
    _warm(kind_name)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = _write(kind, Path(tmp), data)
        t0 = time.perf_counter()
        try:
            with _time_limit(HARD_STOP_S):
                out = kind.load(path)
        except MarinesimError as exc:
            text = str(exc)
            assert kind.filename in text or any(n in text for n in kind.extra), (
                f"{kind_name}: error without the file's location: {text[:300]}"
            )
        else:
            assert _finite(out), f"{kind_name}: accepted, but built non-finite values"
        elapsed = time.perf_counter() - t0
        assert elapsed < BUDGET_S, f"{kind_name}: took {elapsed:.1f} s"


@pytest.mark.parametrize("kind_name", sorted(KINDS))
def test_bundled_example_loads(kind_name: str) -> None:
    """The unmutated example is accepted (so the mutations start from a valid file)."""
    kind = KINDS[kind_name]
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = kind.load(_write(kind, Path(tmp), kind.example))
    assert _finite(out)


@pytest.mark.parametrize("kind_name", sorted(KINDS))
@FUZZ
@given(op=st.sampled_from(OPS), seed=st.integers(0, 2**20), times=st.integers(1, 2))
def test_mutated_input_fails_cleanly(kind_name: str, op: str, seed: int, times: int) -> None:
    _check_load(kind_name, mutate(KINDS[kind_name].example, op, seed, times))


@pytest.mark.parametrize("op", OPS)
def test_every_operator_on_every_kind(op: str) -> None:
    """Each mutation class once on each kind (fixed seed): the classes are all covered."""
    for kind_name in sorted(KINDS):
        _check_load(kind_name, mutate(KINDS[kind_name].example, op, 7))


# --------------------------------------------------------------------------- command line


def _cli(argv: list[str]) -> tuple[int, str]:
    from marinesim.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
        _time_limit(HARD_STOP_S),
    ):
        warnings.simplefilter("ignore")
        rc = main(argv)
    return rc, out.getvalue() + err.getvalue()


def _assert_clean(rc: int, text: str, written: Path | None, *, nan_ok: bool = False) -> None:
    """Exit 0/1/2, no traceback, a message on failure; no inf (nor nan, unless it is the
    log's documented mark of "no value yet") in a file written with exit 0."""
    assert rc in (0, 1, 2), f"exit code {rc}: {text[-500:]}"
    assert "Traceback" not in text, text[-2000:]
    if rc != 0:
        assert "error" in text.lower(), f"exit {rc} without an error message: {text[-500:]}"
    if rc == 0 and written is not None and written.exists():
        body = written.read_text(encoding="utf-8", errors="replace").lower()
        cells = {c for line in body.splitlines()[1:] for c in line.split(",")}
        bad = {"inf", "-inf", "+inf", "infinity", "-infinity"} | (set() if nan_ok else {"nan"})
        assert not cells & bad, (
            "non-finite values written with exit 0"
        )


CLI = settings(FUZZ, max_examples=20)


@CLI
@given(op=st.sampled_from(OPS), seed=st.integers(0, 2**20), script=st.booleans())
def test_cli_usm_run(op: str, seed: int, script: bool) -> None:
    moos, events = KINDS["moos"], KINDS["script"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        mission = _write(moos, folder, moos.example if script else mutate(moos.example, op, seed))
        argv = ["usm", "run", str(mission), "--duration", "20", "-o", str(folder / "out.csv")]
        if script:
            ev = _write(events, folder, mutate(events.example, op, seed))
            argv += ["--script", str(ev)]
        rc, text = _cli(argv)
        _assert_clean(rc, text, folder / "out.csv")


@CLI
@given(op=st.sampled_from(OPS), seed=st.integers(0, 2**20), which=st.sampled_from(["case", "gz"]))
def test_cli_usm_replay(op: str, seed: int, which: str) -> None:
    case = KINDS["case"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = _write(case, folder, case.example)
        if which == "case":
            path.write_bytes(mutate(case.example, op, seed))
        else:
            gz = folder / next(iter(case.extra))
            gz.write_bytes(mutate(gz.read_bytes(), op, seed))
        rc, text = _cli(["usm", "replay", str(path), "-o", str(folder / "out.csv")])
        _assert_clean(rc, text, None)  # replays write NaN for blank cells by design


@CLI
@given(op=st.sampled_from(OPS), seed=st.integers(0, 2**20))
def test_cli_check_scenario(op: str, seed: int) -> None:
    scen = KINDS["scenario"]
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(scen, Path(tmp), mutate(scen.example, op, seed))
        rc, text = _cli(["check", str(path)])
        _assert_clean(rc, text, None)


@settings(CLI, max_examples=10)
@given(op=st.sampled_from(OPS), seed=st.integers(0, 2**20), cfd=st.booleans())
def test_cli_run_scenario(op: str, seed: int, cfd: bool) -> None:
    """A short engine run of a mutated scenario (or of its mutated current field)."""
    scen = KINDS["scenario"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = _write(scen, folder, scen.example if cfd else mutate(scen.example, op, seed))
        if cfd:
            (folder / "demo_current.cfd").write_bytes(mutate(KINDS["cfd"].example, op, seed))
        out = folder / "out"
        rc, text = _cli(["run", str(path), "--set", "time.end=2", "--no-plot", "--no-progress",
                         "--format", "csv", "-o", str(out)])  # fmt: skip
        _assert_clean(rc, text, out / "log.csv", nan_ok=True)  # engine logs: nan = no value


@CLI
@given(
    op=st.sampled_from(OPS),
    seed=st.integers(0, 2**20),
    which=st.sampled_from(["terrain", "pilot", "bathymetry"]),
)
def test_cli_surftrak_run(op: str, seed: int, which: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        terrain = _write(KINDS["terrain"], folder, KINDS["terrain"].example)
        argv = ["surftrak", "run", "--duration", "2", "--out", str(folder / "run.csv")]
        if which == "bathymetry":
            grid = _write(KINDS["bathymetry"], folder, mutate(KINDS["bathymetry"].example, op, seed))
            argv += ["--bathymetry", str(grid), "--track", "0,0,0,1", "--start-z", "-5"]
        else:
            if which == "terrain":
                terrain.write_bytes(mutate(KINDS["terrain"].example, op, seed))
            argv += ["--terrain", str(terrain)]
        if which == "pilot":
            pilot = _write(KINDS["pilot"], folder, mutate(KINDS["pilot"].example, op, seed))
            argv += ["--pilot", str(pilot)]
        rc, text = _cli(argv)
        _assert_clean(rc, text, folder / "run.csv")


@pytest.fixture(scope="module")
def _alloc_compiled() -> None:
    """One report of the unmutated layout first, outside the hang guard: it compiles the
    allocation kernels (cold cache: tens of seconds on a loaded 2-core machine), which is
    start-up cost, not a hang of the mutated input."""
    lay = KINDS["layout"]
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        from marinesim.cli.main import main

        main(["alloc", "report", str(_write(lay, Path(tmp), lay.example))])


@CLI
@given(op=st.sampled_from(OPS), seed=st.integers(0, 2**20))
def test_cli_alloc_report_layout(_alloc_compiled: None, op: str, seed: int) -> None:
    lay = KINDS["layout"]
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(lay, Path(tmp), mutate(lay.example, op, seed))
        rc, text = _cli(["alloc", "report", str(path)])
        _assert_clean(rc, text, None)


@pytest.mark.parametrize(
    "argv_tail",
    [
        ["usm", "run", "{dir}", "--duration", "1", "-o", "{dir}/o.csv"],
        ["usm", "check", "{dir}"],
        ["usm", "replay", "{dir}", "-o", "{dir}/o.csv"],
        ["check", "{dir}/x.yaml"],
        ["surftrak", "run", "--terrain", "{dir}/", "--duration", "1", "--out", "{dir}/r.csv"],
        ["alloc", "report", "{dir}/"],
    ],
)
def test_cli_input_path_is_a_directory(argv_tail: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "x.yaml").mkdir()
        rc, text = _cli([a.replace("{dir}", tmp) for a in argv_tail])
        assert rc == 2 and "Traceback" not in text, text[-1000:]
        assert tmp in text
