"""Real ArduSub logs (.BIN, .tlog) and parameter dumps: read, extract, plot; bad files."""

from __future__ import annotations

import csv
import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from marinesim.cli.main import main
from marinesim.core.errors import ConfigError, ConfigWarning, DataError
from marinesim.interop.ardupilot import read_param_dump, surftrak_params
from marinesim.io.ardulog import read_log, surftrak_series

REPO = Path(__file__).resolve().parents[2]
LOCAL = REPO / "tests" / "data" / "ardusub"
REF = REPO.parent / "shared" / "reference" / "ardusub_sitl"
needs_shared = pytest.mark.skipif(not REF.exists(), reason="../shared not present")
SESSIONS = ("a_manual_descent", "b_althold", "c_surftrak_sawtooth", "p_protocol_probe")
TYPES = ("VER", "PARM", "MODE", "MSG", "ARM", "EV", "ERR", "CTUN", "RFND", "ATT", "RCOU", "BARO")


def test_probe_bin_and_tlog_offline(tmp_path):
    lg = read_log(LOCAL / "probe.BIN.gz")
    assert lg.kind == "bin" and lg.counts["CTUN"] == 230 and lg.counts["RFND"] == 460
    assert lg.tail_bytes == 38  # the logger's last block, 1081344 = 264 × 4096 bytes
    msgs = list(lg.tables["MSG"]["Message"])
    assert "ArduSub V4.7.0-dev (2598e9d4)" in msgs
    tl = read_log(LOCAL / "probe.tlog.gz", ["HEARTBEAT", "DISTANCE_SENSOR"])
    assert tl.kind == "tlog" and tl.counts["HEARTBEAT"] == 52
    assert set(tl.tables) == {"HEARTBEAT", "DISTANCE_SENSOR"}
    d = tl.tables["DISTANCE_SENSOR"]["current_distance"]
    assert 1950 < np.median(d) < 2000  # cm: 20 m floor, vehicle floating
    s = surftrak_series(read_log(LOCAL / "probe.tlog.gz"))
    assert s["modes"][0][1] == "MANUAL" and len(s["t_rfnd"]) == 231


@needs_shared
@pytest.mark.parametrize("session", SESSIONS)
def test_bin_records_match_pymavlink_reference(session, tmp_path):
    """Same records as bin_messages.jsonl (pymavlink 2.4.50) and the counts of session.json."""
    lg = read_log(REF / session / "dataflash.BIN.gz", TYPES)
    meta = json.loads((REF / session / "session.json").read_text())
    for name, n in meta["dataflash_message_counts"].items():
        assert lg.counts.get(name) == n, name
    ref: dict[str, list[dict]] = {}
    with gzip.open(REF / session / "bin_messages.jsonl.gz", "rt") as fh:
        for line in fh:
            r = json.loads(line)
            ref.setdefault(r.pop("type"), []).append(r)
    for name, rows in ref.items():
        cols = lg.tables[name]
        assert len(next(iter(cols.values()))) == len(rows), name
        for key in rows[0]:
            got = cols[key]
            want = [r[key] for r in rows]
            if got.dtype == object:
                assert list(got) == want, (name, key)
            else:
                w = np.array([np.nan if v is None else v for v in want], dtype=float)
                np.testing.assert_array_equal(got, w, err_msg=f"{name}.{key}")


@needs_shared
def test_surftrak_series_of_the_sawtooth_session():
    lg = read_log(
        REF / "c_surftrak_sawtooth" / "dataflash.BIN.gz", ("CTUN", "MODE", "MSG", "RFND", "BARO")
    )
    s = surftrak_series(lg)
    names = [n for _, n in s["modes"]]
    assert names[-2:] == ["ALT_HOLD", "SURFTRAK"]
    assert s["modes"][-1][0] == pytest.approx(51.3, abs=0.05)
    assert s["texts"][0][1] == "rangefinder target is 3.72 meters"
    # the README's figure: DSAlt 3.72 m on the ramp; baro depth ≈ 1.0247 × true depth
    on_ramp = (s["t_ctun"] > 60) & (s["t_ctun"] < 130)
    assert np.allclose(s["DSAlt"][on_ramp], 3.72, atol=0.01)


def test_foreign_and_truncated_files_name_the_byte_offset(tmp_path):
    raw = gzip.decompress((LOCAL / "probe.BIN.gz").read_bytes())
    cut = tmp_path / "cut.BIN"
    cut.write_bytes(raw[:500_001])
    with pytest.raises(DataError, match=r"cut.BIN: byte offset \d+: the log ends inside a record"):
        read_log(cut)
    assert read_log(cut, ["CTUN"], allow_truncated=True).counts["CTUN"] > 50
    foreign = tmp_path / "x.BIN"
    foreign.write_bytes(b"PK\x03\x04" + bytes(200))
    with pytest.raises(DataError, match="byte offset 0: not a DataFlash log"):
        read_log(foreign)
    damaged = tmp_path / "d.BIN"
    damaged.write_bytes(raw[:300_000] + b"\x55" * 4000 + raw[304_000:])
    with pytest.raises(DataError, match=r"byte offset 3000\d\d: \d+ bytes that are no DataFlash"):
        read_log(damaged)
    tlog = gzip.decompress((LOCAL / "probe.tlog.gz").read_bytes())
    tcut = tmp_path / "cut.tlog"
    tcut.write_bytes(tlog[:50_005])
    with pytest.raises(DataError, match="cut.tlog: byte offset"):
        read_log(tcut)
    bad = tmp_path / "bad.tlog"
    bad.write_bytes(tlog[:1000] + b"\x00" * 17 + tlog[1000:2000])
    with pytest.raises(DataError, match="byte offset"):
        read_log(bad)
    empty = tmp_path / "e.BIN"
    empty.write_bytes(b"")
    with pytest.raises(DataError, match="byte offset 0"):
        read_log(empty)


def test_ardusub_log_cli_csv_and_surftrak_plot(tmp_path, capsys):
    out = tmp_path / "tables"
    rc = main(["ardusub", "log", str(LOCAL / "probe.BIN.gz"), "--csv", "-o", str(out),
               "--types", "CTUN,MODE,RFND"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    with (out / "CTUN.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 230 and {"TimeUS", "DSAlt", "SAlt", "TAlt"} <= set(rows[0])
    assert sorted(p.name for p in out.iterdir()) == ["CTUN.csv", "MODE.csv", "RFND.csv"]
    rc = main(["surftrak", "plot", str(LOCAL / "probe.BIN.gz"), "-o", str(tmp_path / "f.png")])
    assert rc == 0 and (tmp_path / "f.png").stat().st_size > 10_000
    rc = main(["surftrak", "plot", str(LOCAL / "probe.tlog.gz"), "-o", str(tmp_path)])
    assert rc == 0 and (tmp_path / "probe.png").exists()
    bad = tmp_path / "junk.BIN"
    bad.write_bytes(b"\x00" * 64)
    rc = main(["ardusub", "log", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2 and "byte offset 0" in err and "Traceback" not in err


def test_overlay_of_a_marinesim_run(tmp_path):
    """A marinesim sitl truth.csv on the log's clock is drawn on the same axes."""
    truth = tmp_path / "run"
    truth.mkdir()
    t = np.arange(0, 20, 0.05)
    with (truth / "truth.csv").open("w") as fh:
        fh.write("t,sitl_time_us,z,floor_z,true_alt\n")
        for v in t:
            fh.write(f"{v},{int(v * 1e6)},0.12,-20.0,19.88\n")
    rc = main(["surftrak", "plot", str(LOCAL / "probe.BIN.gz"), "--overlay", str(truth),
               "-o", str(tmp_path / "o.png")])  # fmt: skip
    assert rc == 0 and (tmp_path / "o.png").exists()


# --- parameter dumps -----------------------------------------------------------------------


@needs_shared
@pytest.mark.parametrize(
    "path",
    [
        REF / "sub.parm",
        REF / "c_surftrak_sawtooth" / "params_all_from_bin.parm",
        REF / "a_manual_descent" / "session.parm",
        REF.parents[1] / "data" / "surftrak" / "params" / "sitl.params",
    ],  # fmt: skip
)
def test_real_parameter_dumps_load(path):
    with __import__("warnings").catch_warnings(record=True) as caught:
        __import__("warnings").simplefilter("always")
        pf = read_param_dump(path, strict=True)
        sp, ignored = surftrak_params(pf)
    assert pf.values and not [w for w in caught if "does not have" in str(w.message)]
    if path.name == "params_all_from_bin.parm":
        assert len(pf.values) == 1386 and sp.PSC_POSZ_P == 3.0 and sp.PILOT_SPEED_UP == 200
        assert len(ignored) > 1300


def test_param_dump_rules(tmp_path):
    qgc = tmp_path / "v.params"
    qgc.write_text(
        "# Onboard parameters for Vehicle 1\n#\n# MAV ID\tCOMPONENT ID\tPARAM NAME\tVALUE\t(TYPE)\n"
        "1\t1\tPSC_POSZ_P\t3.000000000000000000\t9\n1\t1\tPSC_D_VEL_P\t8\t9\n"
        "1\t1\tFOO_BAR\t1\t2\n1\t1\tWIBBLE_X\t2\t2\n"
    )
    with pytest.warns(ConfigWarning, match="2 name.*FOO_BAR, WIBBLE_X"):
        pf = read_param_dump(qgc)
    assert pf.format == "qgc" and pf.values["PSC_D_VEL_P"] == 8.0  # both generations read
    with pytest.raises(ConfigError, match=r"v.params:6:5: FOO_BAR: 2 name"):
        read_param_dump(qgc, strict=True)
    with pytest.warns(FutureWarning, match="PSC_VELZ_P"):
        sp, _ = surftrak_params(pf)
    assert sp.PSC_POSZ_P == 3.0 and sp.PSC_VELZ_P == 8.0
    twice = tmp_path / "t.parm"
    twice.write_text("PILOT_ACCEL_Z 200\nBTN1_FUNCTION 6\nBTN1_FUNCTION 6\nPILOT_ACCEL_Z,250\n")
    with pytest.raises(
        ConfigError,
        match=r"t.parm:4:1: PILOT_ACCEL_Z: given twice.*line 1 sets 200, line 4 sets 250",
    ):
        read_param_dump(twice)
    binary = tmp_path / "b.parm"
    binary.write_bytes(b"PILOT_ACCEL_Z 200\n\x89PNG\r\n")
    with pytest.raises(DataError, match="b.parm: byte offset 18: not UTF-8"):
        read_param_dump(binary)
    nul = tmp_path / "n.parm"
    nul.write_bytes(b"A 1\n\x00\x00")
    with pytest.raises(DataError, match="byte offset 4: NUL"):
        read_param_dump(nul)


def test_ardusub_params_cli(tmp_path, capsys):
    p = tmp_path / "m.parm"
    p.write_text("PSC_JERK_Z 8\nPILOT_ACCEL_Z 500\nNOT_A_PARAM 3\n")
    rc = main(["ardusub", "params", str(p)])
    cap = capsys.readouterr()
    assert rc == 0 and "NOT_A_PARAM" in cap.err and "PSC_JERK_Z" in cap.out
    assert main(["ardusub", "params", str(p), "--strict"]) == 2
    assert "m.parm:3:1: NOT_A_PARAM" in capsys.readouterr().err
    assert math.isfinite(8.0)


@pytest.mark.parametrize("name", ["probe.BIN.gz", "probe.tlog.gz"])
def test_ardusub_log_csv_cells_are_plain_numbers(tmp_path, capsys, name):
    """Issue 22: every numeric cell read back as a number (no ``np.float64(...)`` text)."""
    import pandas as pd

    out = tmp_path / "t"
    assert main(["ardusub", "log", str(LOCAL / name), "--csv", "-o", str(out)]) == 0, (
        capsys.readouterr().err
    )
    tables = sorted(out.glob("*.csv"))
    assert tables
    numeric_cols = 0
    for path in tables:
        text = path.read_text(encoding="utf-8")
        assert "np." not in text and "float64" not in text, path
        df = pd.read_csv(path)
        for col in df.columns:
            if df[col].dtype == object:
                # text columns hold text (names, messages), never a number in disguise
                assert pd.to_numeric(df[col], errors="coerce").isna().all(), (path.name, col)
            else:
                numeric_cols += 1
    assert numeric_cols > 20
    if name.startswith("probe.BIN"):
        ctun = pd.read_csv(out / "CTUN.csv")
        assert ctun["TimeUS"].dtype.kind in "iuf" and ctun["DSAlt"].dtype.kind == "f"
