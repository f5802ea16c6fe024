"""PythonVehicleSimulator fleet replays (README §3.4): DSRV … torpedo, kind ``pvs``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from marinesim.core.errors import UnknownNameError
from marinesim.reference import pvs as ref
from marinesim.reference import pvs_fleet

OFFLINE = Path(__file__).resolve().parents[1] / "data" / "pvs_fleet"
OFFLINE_MANIFEST = json.loads((OFFLINE / "manifest.json").read_text())
SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "pvs_fleet"
needs_shared = pytest.mark.skipif(not SHARED.exists(), reason="../shared not present")


@pytest.mark.parametrize("fname", sorted(OFFLINE_MANIFEST["files"]))
def test_trimmed_case_passes(fname: str) -> None:
    """The first rows of every fleet file (shipped): same operation order as upstream, so far
    inside the 1e-6-of-range ceiling of §3.3."""
    entry = OFFLINE_MANIFEST["files"][fname]
    res = ref.verify_file(OFFLINE / fname, entry)  # dispatched by reference.pvs
    assert res.passed, res.message
    assert {c.column for c in res.columns} == set(entry["columns"])
    assert all(c.max_error <= 1e-3 * c.tolerance for c in res.columns)


@needs_shared
def test_full_fleet_folder_passes() -> None:
    results = ref.verify_path(SHARED)
    assert len(results) == 10
    bad = [(r.case, r.message) for r in results if not r.passed]
    assert not bad
    for r in results:
        assert all(c.max_error <= 1e-3 * c.tolerance for c in r.columns), r.case


def test_unknown_vehicle_lists_the_fleet() -> None:
    with pytest.raises(UnknownNameError, match="DSRV.*torpedo"):
        ref.build("submarine('stepInput')")
    assert pvs_fleet.handles("tanker('headingAutopilot', -20, 0.5, 150, 20, 80)")
    assert not pvs_fleet.handles("remus100()")


def test_corrupt_file_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    fname = "tanker_headingAutopilot.csv.gz"
    (tmp_path / fname).write_bytes(b"not gzip")
    res = ref.verify_file(tmp_path / fname, OFFLINE_MANIFEST["files"][fname])
    assert res.error and "DataError" in res.message
