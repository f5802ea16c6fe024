"""The recorder's reused buffers never change data already handed out (no compiled tick).

Without a sink the recorder writes every chunk straight into its result arrays and reuses
its chunk buffers; with a sink it reuses a buffer set only after the sink's ``done``.  These
tests write chunks, let the recorder reuse its memory, and check the data kept earlier
(a paused result, a final result, a sink holding a chunk) is unchanged, and every value
equals the one logged.
"""

from __future__ import annotations

import numpy as np
import pytest

from marinesim.engine.recorder import Chunk, Recorder

NA, NB = 7, 3  # entity rows of blocks "a" and "b"
SMALL = 4 * 1024  # chunk bytes: a few frames per chunk, many chunks


def _log(rec: Recorder, k: int, *, late_from: int = 5, scale: float = 1.0) -> None:
    """Frame k's values: distinct per frame, row and component (``late`` from frame 5 on)."""
    rows_a = np.arange(NA)[:, None]
    rec.log("a", "pos", scale * (100 * k + 10 * rows_a + np.arange(3)), "m", ("n", "e", "d"))
    rec.log("b", "pos", scale * (-100 * k - 10 * np.arange(NB)[:, None] - np.arange(3)), "m")
    rec.log("a", "speed", scale * (k + 0.5 * np.arange(NA)), "m/s")  # block b lacks it
    if k >= late_from:
        rec.log("b", "late", np.full(NB, scale * k), "s")


def _frames(rec: Recorder, frames: range, *, scale: float = 1.0) -> None:
    """Log and record frames ``frames`` (frame k at t = 0.1·k)."""
    for k in frames:
        _log(rec, k, scale=scale)
        rec.frame(0.1 * k)


def _hinted(hint: int | None) -> Recorder:
    """A recorder of small chunks over blocks a and b, told ``hint`` frames (or not)."""
    rec = Recorder({"a": NA, "b": NB}, chunk_bytes=SMALL)
    rec.frames_hint = hint
    return rec


def _expected(frames: range, *, late_from: int = 5, scale: float = 1.0) -> dict[str, np.ndarray]:
    ks = np.asarray(frames, dtype=float)
    pos = np.empty((NA + NB, len(ks), 3))
    pos[:NA] = scale * (100 * ks[None, :, None] + 10 * np.arange(NA)[:, None, None] + np.arange(3))
    pos[NA:] = scale * (-100 * ks[None, :, None] - 10 * np.arange(NB)[:, None, None] - np.arange(3))
    speed = np.full((NA + NB, len(ks), 1), np.nan)
    speed[:NA, :, 0] = scale * (ks[None, :] + 0.5 * np.arange(NA)[:, None])
    late = np.full((NA + NB, len(ks), 1), np.nan)
    on = ks >= late_from
    late[NA:, on, 0] = scale * ks[on]
    return {"pos": pos, "speed": speed, "late": late}


def _check(signals: dict, want: dict[str, np.ndarray]) -> None:
    assert set(signals) == set(want)
    for name, v in want.items():
        got = signals[name].values
        assert got.shape == v.shape and got.flags.c_contiguous, name
        np.testing.assert_array_equal(got, v, err_msg=name)


# frames_hint: None keeps the chunks (the arrays built at the end), 60 writes the frames
# straight into the result arrays
HINTS = pytest.mark.parametrize("hint", [None, 60])


@HINTS
def test_in_memory_result_equals_logged_values_across_many_chunks(hint: int | None) -> None:
    rec = _hinted(hint)
    _frames(rec, range(40))
    rec.finish()
    assert rec._cap < 40  # several chunks, one buffer set reused
    assert (rec._chunks == []) == (hint is not None)  # the frames straight in the result
    np.testing.assert_array_equal(rec.times, 0.1 * np.arange(40))
    _check(rec.signals(["a", "b"]), _expected(range(40)))


@HINTS
def test_paused_result_is_not_changed_by_the_frames_after_it(hint: int | None) -> None:
    rec = _hinted(hint)
    _frames(rec, range(13))
    paused = rec.signals()  # mid-run (no finish): the recorder goes on writing
    before = {n: s.values.copy() for n, s in paused.items()}
    _frames(rec, range(13, 50))
    rec.finish()
    final = rec.signals()
    for n, v in before.items():
        np.testing.assert_array_equal(paused[n].values, v, err_msg=n)
    _check(paused, _expected(range(13)))
    _check(final, _expected(range(50)))
    again = rec.signals()  # a second result of the same run: equal values, its own arrays
    _check(again, _expected(range(50)))
    assert not np.shares_memory(again["pos"].values, final["pos"].values)


@HINTS
def test_final_result_is_not_changed_by_a_restored_snapshot_run_again(hint: int | None) -> None:
    rec = _hinted(hint)
    _frames(rec, range(9))
    snap = rec.state()
    _frames(rec, range(9, 25))
    rec.finish()
    first = rec.signals()
    _check(first, _expected(range(25)))
    rec.set_state(snap)  # back to frame 9; the next frames differ (scale 2)
    _frames(rec, range(9, 20), scale=2.0)
    rec.finish()
    second = rec.signals()
    _check(first, _expected(range(25)))  # untouched by the frames written after it
    want = _expected(range(20))
    redo = _expected(range(9, 20), scale=2.0)
    for n in want:
        want[n][:, 9:] = redo[n]
    _check(second, want)


class _HoldingSink:
    """Keeps every chunk's arrays (no copy); gives the buffers back only when told."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []

    def write(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)


def test_sink_chunk_arrays_are_not_reused_before_done() -> None:
    sink = _HoldingSink()
    rec = Recorder({"a": NA, "b": NB}, chunk_bytes=SMALL, flush_s=1e9, sink=sink)
    for k in range(60):
        _log(rec, k)
        rec.frame(0.1 * k)
        if len(sink.chunks) == 2 and k % 2:
            sink.chunks[0].done()  # the first chunk's buffers may now be reused
    rec.finish()
    assert len(sink.chunks) > 3
    want = _expected(range(60))
    for c in sink.chunks[1:]:  # every chunk not given back holds its own frames
        f = slice(c.first_frame, c.first_frame + len(c.t))
        for n, v in c.values.items():
            np.testing.assert_array_equal(v.transpose(2, 1, 0), want[n][:, f], err_msg=n)


def test_a_signal_left_out_by_the_selection_keeps_its_last_value_unrecorded() -> None:
    # log_columns: "b" is not recorded, but its last value is there for a law that takes
    # over from the plugins (Recorder.last / known), through a snapshot too
    rec = Recorder({"blk": 2}, select=("a",))
    rec.log("blk", "a", [1.0, 2.0], "m")
    rec.log("blk", "b", np.array([[3.0, 4.0], [5.0, 6.0]]), "m/s")
    rec.frame(0.0)
    assert rec.known("a") and rec.known("b") and not rec.known("c")
    assert list(rec.signals()) == ["a"] and rec.last("blk", "c") is None
    np.testing.assert_array_equal(rec.last("blk", "a"), [[1.0], [2.0]])
    np.testing.assert_array_equal(rec.last("blk", "b"), [[3.0, 4.0], [5.0, 6.0]])
    snap = rec.state()
    rec.hold(("blk", "b"), np.array([[7.0, 8.0], [9.0, 10.0]]))  # the compiled route's last tick
    rec.hold(("blk", "a"), np.array([[11.0], [12.0]]))
    np.testing.assert_array_equal(rec.last("blk", "b"), [[7.0, 8.0], [9.0, 10.0]])
    assert "b" not in rec.units and ("blk", "b") not in rec.current
    rec.frame(1.0)
    np.testing.assert_array_equal(rec.signals()["a"].values[:, :, 0], [[1.0, 11.0], [2.0, 12.0]])
    rec.set_state(snap)
    np.testing.assert_array_equal(rec.last("blk", "b"), [[3.0, 4.0], [5.0, 6.0]])
