"""Batches on Dask: the runs table, identity across workers and stacking, faults, resume, CLI."""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from marinesim.batch import run
from marinesim.cli.main import main
from marinesim.core.errors import ConfigError

SMALL = str(Path(__file__).resolve().parents[1] / "data" / "batch" / "mc_small.yaml")
SPEED = "entities.auv.autonomy.survey.params.speed"


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(
        a.reset_index(drop=True), b.reset_index(drop=True), check_exact=True
    )


def test_runs_table_identical_for_1_and_2_workers_and_stacked_or_not(tmp_path: Path) -> None:
    sweep = {"parameters": {SPEED: [1.2, 1.8]}}
    kw = {"replicas": 3, "sweep": sweep, "sets": {"time.end": 6}, "figures": False}
    one = run(SMALL, outdir=tmp_path / "w1", workers=1, **kw)
    two = run(SMALL, outdir=tmp_path / "w2", workers=2, **kw)
    single = run(SMALL, outdir=tmp_path / "c1", workers=2, chunk=1, **kw)  # one simulation per run
    assert one.plan.stackable
    assert len(one.runs) == 6 and set(one.runs["status"]) == {"completed"}
    assert one.runs["run_id"].is_unique
    _same(one.runs, two.runs)
    _same(one.runs, single.runs)
    # the metrics are there, per entity, with team sums rebuilt per replica
    cols = one.runs.columns
    assert "nav_error_rms[auv[0]]" in cols and "distance_travelled_sum[team 1]" in cols
    r = one.runs.iloc[0]
    assert (
        r["distance_travelled_sum[team 1]"]
        == r["distance_travelled[auv[0]]"] + r["distance_travelled[auv[1]]"]
    )
    # replicas differ, points share the replica streams: same replica, other speed → other distance
    assert one.runs["nav_error_rms[auv[0]]"].nunique() > 1
    # files: table, summary, partitioned logs
    table = pd.read_parquet(tmp_path / "w1" / "runs.parquet")
    _same(table, one.runs)
    summ = pd.read_csv(tmp_path / "w1" / "summary.csv")
    row = summ[(summ["metric"] == "nav_error_rms[auv[0]]") & (summ["point"] == 0)].iloc[0]
    x = one.runs[one.runs["point"] == 0]["nav_error_rms[auv[0]]"]
    assert (
        row["n"] == 3
        and row["mean"] == pytest.approx(x.mean())
        and row["std"] == pytest.approx(x.std())
    )
    assert row["ci95_low"] < row["mean"] < row["ci95_high"]
    logs = pd.read_parquet(tmp_path / "w1" / "logs")
    assert set(logs["run_id"].astype(str)) == set(one.runs["run_id"])
    assert set(logs["entity"]) == {"auv[0]", "auv[1]"}


def test_bad_sampled_value_is_that_runs_error_and_the_batch_goes_on(tmp_path: Path) -> None:
    sweep = {"parameters": {"entities.auv.sensors.gps.params.noise_std": [1.0, -2.0]}}
    res = run(
        SMALL, outdir=tmp_path / "o", replicas=2, sweep=sweep, sets={"time.end": 4}, workers=1
    )
    st = res.runs.set_index("run_id")["status"].to_dict()
    assert st == {
        "p0000r00000": "completed",
        "p0000r00001": "completed",
        "p0001r00000": "invalid",
        "p0001r00001": "invalid",
    }
    err = res.runs.set_index("run_id").loc["p0001r00000", "error"]
    assert "gps.params.noise_std" in err and "greater than or equal to 0" in err
    assert (tmp_path / "o" / "metrics_hist.png").stat().st_size > 0
    assert (tmp_path / "o" / "tracks.png").stat().st_size > 0


def test_resume_skips_finished_runs_and_gives_the_same_table(tmp_path: Path) -> None:
    out = tmp_path / "o"
    kw = {"replicas": 4, "sets": {"time.end": 4}, "workers": 1, "figures": False}
    full = run(SMALL, outdir=out, **kw)
    for rid in ("p0000r00001", "p0000r00003"):  # as if the batch had been killed before these
        (out / "runs" / f"{rid}.json").unlink()
        shutil.rmtree(out / "logs" / f"run_id={rid}")
    with pytest.raises(ConfigError, match="already holds a batch; pass --resume"):
        run(SMALL, outdir=out, **kw)
    again = run(SMALL, outdir=out, resume=True, **kw)
    assert again.skipped == 2
    _same(full.runs, again.runs)
    with pytest.raises(ConfigError, match="planned with another scenario, sweep, replicas or seed"):
        run(SMALL, outdir=out, resume=True, **{**kw, "replicas": 5})


def test_unwritable_outdir_and_unreachable_scheduler_fail_fast(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="cannot be written"):
        run(SMALL, outdir=blocker / "sub", replicas=1)
    assert not (tmp_path / "file" / "sub").exists()
    t0 = time.monotonic()
    with pytest.raises(
        ConfigError, match="cannot reach the Dask scheduler at 'tcp://127.0.0.1:9' within 2 s"
    ):
        run(
            SMALL,
            outdir=tmp_path / "o",
            replicas=1,
            scheduler="tcp://127.0.0.1:9",
            connect_timeout=2,
        )
    assert time.monotonic() - t0 < 20


def test_killed_worker_runs_are_rerun_and_every_run_appears_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dask
    from dask.distributed import Client, LocalCluster

    from marinesim.core.libm import libm_environment

    # workers of the user's own, started as docs/guide/worlds.md says (numpy on libm's bits
    # before it is imported), so that their rows are bit-identical to a local batch's
    spawn = {**dask.config.get("distributed.nanny.pre-spawn-environ"), **libm_environment()}
    for k in spawn:  # the nanny writes them into this process's environment: put back after
        had = k in os.environ
        monkeypatch.setenv(k, os.environ.get(k, "-"))
        if not had:
            monkeypatch.delenv(k)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn}), LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as cluster:
        # one client at a time in this process: the batch opens its own below
        with Client(cluster) as client:
            pids = list(client.run(os.getpid).values())
        out = tmp_path / "o"
        killed: list[int] = []

        def killer() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if (out / "runs").exists() and any((out / "runs").glob("*.json")):
                    os.kill(pids[0], signal.SIGKILL)  # a worker dies mid-batch
                    killed.append(pids[0])
                    return
                time.sleep(0.05)

        th = threading.Thread(target=killer)
        th.start()
        res = run(
            SMALL,
            outdir=out,
            replicas=10,
            chunk=1,
            sets={"time.end": 10},
            scheduler=cluster.scheduler_address,
            figures=False,
        )
        th.join()
    assert killed, "the worker was never killed"
    assert sorted(res.runs["run_id"]) == [f"p0000r{r:05d}" for r in range(10)]
    assert set(res.runs["status"]) == {"completed"}
    ref = run(
        SMALL, outdir=tmp_path / "ref", replicas=10, sets={"time.end": 10}, workers=1, figures=False
    )
    _same(res.runs, ref.runs)


def test_cli_batch_end_to_end_and_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "design: random\nsamples: 2\nseed: 5\nparameters:\n"
        f"  {SPEED}: {{distribution: uniform, low: 2, high: 4, unit: knot}}\n"
    )
    rc = main(
        [
            "batch",
            SMALL,
            "--replicas",
            "2",
            "--sweep",
            str(sweep),
            "--workers",
            "1",
            "--set",
            "time.end=4",
            "--var",
            "end=4",
            "--seed",
            "11",
            "--no-plot",
            "-o",
            str(tmp_path / "o"),
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "batch: 4 runs (2 point(s) x 2 replica(s)), seed 11, stacked replicas" in out
    assert "runs: 4 (4 completed)" in out
    df = pd.read_parquet(tmp_path / "o" / "runs.parquet")
    assert (df["seed"] == 11).all()
    v = df[SPEED]
    assert ((v >= 2 * 1852 / 3600) & (v < 4 * 1852 / 3600)).all()
    assert main(["batch", SMALL, "--replicas", "0", "-o", str(tmp_path / "x")]) == 2
    assert "replicas must be an integer >= 1, got 0" in capsys.readouterr().err
    assert main(["batch", SMALL, "--chunk", "0", "-o", str(tmp_path / "x")]) == 2
    assert "--chunk must be >= 1, got 0" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("parameters:\n  entities.auv.spawn.nort: [1, 2]\n")
    assert main(["batch", SMALL, "--sweep", str(bad), "-o", str(tmp_path / "y")]) == 2
    assert "did you mean 'north'" in capsys.readouterr().err


def test_local_workers_share_the_cores_among_numba_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    # two workers on this machine's cores: each worker's prange loops get cores // 2 threads
    # (not one per core each), unless NUMBA_NUM_THREADS is set by the user; their numpy gives
    # libm's bits (on an AVX-512 CPU this process's may not: NPY_DISABLE_CPU_FEATURES)
    from marinesim.batch.runner import _client, worker_env
    from marinesim.core.libm import libm_environment, numpy_matches_libm

    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES", raising=False)
    want = str(max(1, (os.cpu_count() or 1) // 2))
    assert worker_env(2) == {"NUMBA_NUM_THREADS": want, **libm_environment()}
    assert bool(libm_environment()) is not numpy_matches_libm()
    client, cluster = _client(2, None, 30.0)
    try:
        got = client.run(lambda: os.environ.get("NUMBA_NUM_THREADS"))
        libm = client.run(numpy_matches_libm)
    finally:
        client.close()
        cluster.close()
    assert sorted(got.values()) == [want, want]
    assert list(libm.values()) == [True, True]
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    assert worker_env(2) == libm_environment()
    assert "NUMBA_NUM_THREADS" not in worker_env(2)


def test_a_batch_keeps_the_signals_of_its_logs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch records only the signals its logs need (``log_columns``), on every route: a
    selection runs on the compiled tick (``test_compiled_ekf``), on CUDA too."""
    from marinesim.batch import worker
    from marinesim.batch.plan import BatchSource
    from marinesim.batch.results import LOG_SIGNALS
    from marinesim.scenario.build import builtin_path

    path = builtin_path("demo_survey")
    src = BatchSource(path.read_text(), str(path), str(path.parent), "demo_survey", {}, {}, 1)
    monkeypatch.delenv("MARINESIM_JIT", raising=False)
    assert worker._load(src, {}, 1.0).model.log_columns == list(LOG_SIGNALS)
    monkeypatch.setenv("MARINESIM_JIT", "cuda")
    assert worker._load(src, {}, 1.0).model.log_columns == list(LOG_SIGNALS)


def test_cli_chunk_sets_the_worlds_of_a_simulation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from marinesim.batch import runner

    sizes: list[int] = []
    tasks = runner._tasks

    def spy(plan, todo, workers, chunk, log_every_s):  # noqa: ANN001, ANN202
        out = tasks(plan, todo, workers, chunk, log_every_s)
        sizes.extend(len(t.runs) for t in out)
        return out

    monkeypatch.setattr(runner, "_tasks", spy)
    rc = main(["batch", SMALL, "--replicas", "5", "--chunk", "2", "--workers", "1", "--set",
               "time.end=2", "--no-plot", "--no-logs", "-o", str(tmp_path / "c")])  # fmt: skip
    assert rc == 0, capsys.readouterr().out
    assert sorted(sizes) == [1, 2, 2]
    df = pd.read_parquet(tmp_path / "c" / "runs.parquet")
    assert sorted(df["replica"]) == [0, 1, 2, 3, 4] and (df["status"] == "completed").all()


def test_the_batch_says_whether_its_workers_numpy_is_libms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the local workers are started on libm's bits: batch.json and the result say so, and
    # the CLI adds no note; workers that are not (a scheduler of the user's) get a note
    from marinesim.batch import runner

    args = ["batch", SMALL, "--replicas", "2", "--workers", "1", "--set", "time.end=2",
            "--no-plot", "--no-logs", "-o"]  # fmt: skip
    assert main([*args, str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert json.loads((tmp_path / "a" / "batch.json").read_text())["numpy_libm"] is True
    assert "not libm's" not in out
    monkeypatch.setattr(runner, "numpy_matches_libm", lambda: False)
    assert main([*args, str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert json.loads((tmp_path / "b" / "batch.json").read_text())["numpy_libm"] is False
    assert "note: the workers' numpy is not libm's (AVX-512)" in out
    assert "NPY_DISABLE_CPU_FEATURES" in out
