"""Frame recorder with bounded memory: fixed-size chunk buffers handed to a sink or kept.

Every frame copies the current value of each signal into a preallocated chunk buffer
``(k, rows, N)`` (component-major, then time: one row per recorded frame holding all entity rows
of every block, so each log column of a chunk is one contiguous block of memory).  When
the buffer is full, or when ``flush_s`` seconds of wall time have passed since the previous
flush, the chunk goes to the *sink* (streaming: the log writer of :mod:`marinesim.io.log`
writes it to disk; a buffer set comes back for reuse when the sink calls ``Chunk.done``) or,
without a sink, is transposed straight into the (N, T, k) arrays of the
:class:`~marinesim.engine.results.RunResult` when the run's length is known and fits
``_RESULT_AHEAD_BYTES`` (reserved for it, filled chunk by chunk; the one buffer set is reused,
no chunk is copied or kept; :meth:`Recorder.signals` then hands them out as they are), else
kept as a copy for :meth:`Recorder.signals` to assemble.  With a sink the recorder's memory is
one chunk (about ``chunk_bytes``) plus 8 bytes of frame time per recorded frame, whatever the
duration.

Decimation (``every``: record one tick in ``every``; the last tick of a run is always recorded)
and signal selection (``select``: glob patterns of signal names) come from the scenario keys
``log_rate`` and ``log_columns``.  The engine does no file I/O here: the sink is any object with
a ``write(chunk)`` method.
"""

from __future__ import annotations

import fnmatch
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from marinesim.core.errors import ConfigError, EngineError
from marinesim.engine.results import Signal

__all__ = ["ALWAYS_LOGGED", "Chunk", "ChunkSink", "Recorder"]

#: Signals recorded whatever ``log_columns`` selects (figures and metrics need them).
ALWAYS_LOGGED = ("truth.pos", "truth.heading", "truth.speed", "active")

DEFAULT_CHUNK_BYTES = 16 * 2**20
DEFAULT_FLUSH_S = 2.0
_MAX_ROWS = 65_536
#: Most bytes the in-memory result arrays reserve ahead of the frames recorded (they grow).
_RESULT_AHEAD_BYTES = 2**30
#: Bytes of one vehicle block of a transpose (a cache-sized piece).
_BLOCK_BYTES = 2**18


@dataclass
class Chunk:
    """Recorded frames ``first_frame .. first_frame + len(t) - 1``.

    Attributes
    ----------
    t : ndarray, shape (T_c,)
        Frame times [s].
    values : dict of str to ndarray, shape (k, T_c, N)
        Values of every signal known so far, component-major (``values[name][j]`` is the
        time-major (T_c, N) column of component j; NaN where an entity lacks the signal).
    first_frame : int
        Index of the chunk's first frame in the run.
    meta : dict of str to (unit, labels)
        Every signal known so far, in order of first appearance (the column order).
    """

    t: NDArray[np.float64]
    values: dict[str, NDArray[np.float64]]
    first_frame: int
    meta: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    release: Callable[[], None] | None = None

    def done(self) -> None:
        """Give the buffers back to the recorder (a sink calls it once the chunk is written)."""
        if self.release is not None:
            self.release()
            self.release = None


class ChunkSink(Protocol):
    """Where a streaming recorder sends its chunks (implemented by the log writer)."""

    def write(self, chunk: Chunk) -> None:
        """Write one chunk, now or later; call ``chunk.done()`` when its arrays are free."""


class Recorder:
    """Collects frames (hold-last for plugin signals logged at lower rates).

    Parameters
    ----------
    block_sizes : dict of str to int
        Entity rows of every block, in block order (the row order of the log).
    every : int
        Record one tick in ``every`` (decimation; the first and last frames are always kept).
    select : sequence of str, optional
        Glob patterns of the signal names to record (``ALWAYS_LOGGED`` are always recorded);
        None records every signal.
    chunk_bytes : int
        Target size of one chunk buffer [bytes].
    flush_s : float
        With a sink, flush at least this often [s of wall time].
    sink : ChunkSink, optional
        Streaming destination; None keeps every chunk in memory.
    """

    def __init__(
        self,
        block_sizes: dict[str, int],
        *,
        every: int = 1,
        select: tuple[str, ...] | list[str] | None = None,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        flush_s: float = DEFAULT_FLUSH_S,
        sink: ChunkSink | None = None,
    ) -> None:
        if int(every) < 1:
            raise ConfigError(f"log decimation must be >= 1 tick, got {every}", param="log_rate")
        self.block_sizes = dict(block_sizes)
        self.offsets: dict[str, int] = {}
        total = 0
        for b, n in self.block_sizes.items():
            self.offsets[b] = total
            total += n
        self.n_rows = total
        self.every = int(every)
        self.select = tuple(select) if select is not None else None
        self.chunk_bytes = int(chunk_bytes)
        self.flush_s = float(flush_s)
        self.sink = sink
        self.units: dict[str, str] = {}
        self.labels: dict[str, tuple[str, ...]] = {}
        self.current: dict[tuple[str, str], NDArray[np.float64]] = {}
        #: The last values (and units) of the signals ``select`` leaves out: not recorded, but
        #: a law that takes over from the plugins starts from them (:meth:`last`).
        self.held: dict[tuple[str, str], NDArray[np.float64]] = {}
        self.held_units: dict[str, str] = {}
        self._skip: set[str] = set()
        self._keep: set[str] = set()
        #: Frames the run will record at most (None: unknown); a shorter run gets smaller
        #: chunk buffers (no 16 MB of NaN for a few thousand frames).
        self.frames_hint: int | None = None
        #: Rows of worlds that have ended (log order) and every signal's values at their end,
        #: (k, rows): every later frame repeats them (:meth:`freeze`).
        self._fidx = np.zeros(0, dtype=np.int64)
        self._fval: dict[str, NDArray[np.float64]] = {}
        self._reset_storage()

    # storage ----------------------------------------------------------------------------
    def _reset_storage(self) -> None:
        self._buf: dict[str, NDArray[np.float64]] = {}
        self._tbuf = np.empty(0)
        self._cap = 0
        self._row = 0
        self._flushed = 0  # frames handed to the sink or to self._chunks
        self._chunks: list[Chunk] = []
        self._t_done: list[NDArray[np.float64]] = []
        self._ticks = 0  # frame() calls (recorded or not)
        self._pending: float | None = None  # time of a skipped (decimated) last frame
        self._last_flush = _time.perf_counter()
        self._spare: list[tuple[int, dict[str, NDArray[np.float64]]]] = []
        # without a sink: the result arrays (N, T_cap, k), filled chunk by chunk (frames
        # 0 … flushed − 1 valid); ``_handed``: they are in a result given out (copy on write)
        self._res: dict[str, NDArray[np.float64]] = {}
        self._res_len = 0
        self._handed = False
        self._final = False  # finish() called and nothing recorded since

    @property
    def frames(self) -> int:
        """Frames recorded so far (flushed and buffered)."""
        return self._flushed + self._row

    @property
    def flushed_frames(self) -> int:
        """Frames already handed to the sink (or kept as chunks)."""
        return self._flushed

    @property
    def times(self) -> NDArray[np.float64]:
        """(T,) times of the recorded frames [s]."""
        return np.concatenate([*self._t_done, self._tbuf[: self._row]])

    @property
    def meta(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """Signal name → (unit, labels), in order of first appearance."""
        return {n: (self.units[n], self.labels[n]) for n in self.units}

    def _wanted(self, name: str) -> bool:
        if name in self._keep:
            return True
        if name in self._skip:
            return False
        ok = (
            self.select is None
            or name in ALWAYS_LOGGED
            or any(fnmatch.fnmatchcase(name, p) for p in self.select)
        )
        (self._keep if ok else self._skip).add(name)
        return ok

    def _bytes_per_frame(self) -> int:
        return 8 * self.n_rows * max(1, sum(len(lab) for lab in self.labels.values())) + 8

    def _alloc(self) -> None:
        cap = min(_MAX_ROWS, self.chunk_bytes // self._bytes_per_frame())
        left = None if self.frames_hint is None else self.frames_hint - self._flushed
        if left is not None and left > 0:
            cap = min(cap, left)
        self._cap = int(max(1, cap))
        self._tbuf = np.empty(self._cap)
        self._buf = {
            name: np.full((len(self.labels[name]), self._cap, self.n_rows), np.nan)
            for name in self.units
        }

    # recording --------------------------------------------------------------------------
    def log(
        self,
        block: str,
        name: str,
        values: Any,
        unit: str = "",
        labels: tuple[str, ...] | None = None,
    ) -> None:
        """Set the current value of a signal for one block: (N,) or (N, k)."""
        arr = np.asarray(values, dtype=float)
        if arr.ndim == 1:
            arr = arr[:, None]
        key = (block, name)
        if not self._wanted(name):
            self.held[key] = arr.copy()
            self.held_units[name] = unit
            return
        prev = self.current.get(key)
        if prev is not None and prev.shape == arr.shape and self.units.get(name) == unit:
            self.current[key] = arr.copy()  # fast path: already validated shape and unit
            return
        n = self.block_sizes[block]
        if arr.ndim != 2 or arr.shape[0] != n:
            raise ConfigError(
                f"signal {name!r} of block {block!r} must have shape ({n},) or ({n}, k), got {np.shape(values)}"
            )
        prev_unit = self.units.get(name)
        if prev_unit is not None and prev_unit != unit:
            raise ConfigError(f"signal {name!r} logged with unit {unit!r} and {prev_unit!r}")
        k = arr.shape[1]
        lab = tuple(labels) if labels else (tuple(str(i) for i in range(k)) if k > 1 else ("",))
        if len(lab) != k:
            raise ConfigError(f"signal {name!r}: {len(lab)} labels for {k} components")
        if name in self.labels and len(self.labels[name]) != k:
            raise ConfigError(f"signal {name!r} changed its number of components")
        self.units[name] = unit
        self.labels[name] = lab
        self.current[key] = arr.copy()

    def last(self, block: str, name: str) -> NDArray[np.float64] | None:
        """The last value of a signal of ``block``, (N, k), recorded or left out by ``select``
        (None: not logged yet)."""
        key = (block, name)
        val = self.current.get(key)
        return self.held.get(key) if val is None else val

    def known(self, name: str) -> bool:
        """Whether a signal ``name`` has been logged, recorded or left out by ``select``."""
        return name in self.units or name in self.held_units

    def hold(self, key: tuple[str, str], value: NDArray[np.float64]) -> None:
        """Set a known signal's last value (the compiled route's last tick), (N, k)."""
        if key in self.current:
            self.current[key] = np.array(value, dtype=float)
        else:
            self.held[key] = np.array(value, dtype=float)

    def frame(self, t: float) -> None:
        """Record the current values as the frame at time t (one tick in ``every``)."""
        tick = self._ticks
        self._ticks += 1
        if tick % self.every:
            self._pending = float(t)
            return
        self._pending = None
        self._record(float(t))

    def freeze(self, rows: NDArray[np.int64]) -> None:
        """Stop the log of ``rows`` (log order; an ended world's): every later frame repeats
        their current values (those of the frame of their end), on either route of the tick.

        A signal that first appears later is NaN in those rows.
        """
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return
        for (block, name), arr in self.current.items():
            v = self._fval.get(name)
            if v is None:
                v = self._fval[name] = np.full((arr.shape[1], self.n_rows), np.nan)
            o = self.offsets[block]
            sel = rows[(rows >= o) & (rows < o + arr.shape[0])]
            v[:, sel] = arr[sel - o].T
        self._fidx = np.union1d(self._fidx, rows)

    def hold_frozen(self, row: int, count: int) -> None:
        """Write the frozen rows' held values into buffer frames ``row … row + count − 1``."""
        idx = self._fidx
        if idx.size == 0 or count <= 0:
            return
        for name, b in self._buf.items():
            v = self._fval.get(name)
            if v is None:
                b[:, row : row + count, idx] = np.nan
            else:
                b[:, row : row + count, idx] = v[:, None, idx]

    def keep_pending(self) -> None:
        """Record a decimated-away frame now (the last frame of a world that has ended)."""
        if self._pending is not None:
            self._record(self._pending)
            self._pending = None

    def finish(self) -> None:
        """Record a decimated-away last frame, then flush what is buffered."""
        if self._pending is not None:
            self._record(self._pending)
            self._pending = None
        self.flush()
        self._final = True

    def _record(self, t: float) -> None:
        self._final = False
        if self._cap == 0:
            self._alloc()
        row = self._row
        buf = self._buf
        for (block, name), arr in self.current.items():
            b = buf.get(name)
            if b is None:  # a signal that appeared during this chunk: NaN before its first log
                b = buf[name] = np.full((arr.shape[1], self._cap, self.n_rows), np.nan)
            o = self.offsets[block]
            b[:, row, o : o + arr.shape[0]] = arr.T
        if self._fidx.size:
            self.hold_frozen(row, 1)
        self._tbuf[row] = t
        self._row = row + 1
        if self._row >= self._cap or (
            self.sink is not None and _time.perf_counter() - self._last_flush >= self.flush_s
        ):
            self.flush()

    def flush(self) -> None:
        """Hand the buffered frames to the sink (or keep them); the buffers are reused."""
        rows = self._row
        self._last_flush = _time.perf_counter()
        if rows == 0:
            return
        t = self._tbuf[:rows].copy()
        if self.sink is not None:
            bufs, cap = self._buf, self._cap
            spare = self._spare
            chunk = Chunk(
                t,
                {n: b[:, :rows] for n, b in bufs.items()},
                self._flushed,
                self.meta,
                release=lambda: spare.append((cap, bufs)),
            )
            self._t_done.append(t)
            self._row = 0
            self._flushed += rows
            # the sink may write in the background: fill another buffer set meanwhile (a set
            # given back keeps its NaN regions: a region once written is rewritten every frame)
            self._buf = {}
            while spare:
                c, b = spare.pop()
                if c == self._cap:
                    self._buf = b
                    break
            if not self._buf:
                self._buf = {
                    n: np.full((len(self.labels[n]), self._cap, self.n_rows), np.nan)
                    for n in self.units
                }
            self.sink.write(chunk)
            if self._cap * self._bytes_per_frame() > 2 * self.chunk_bytes:
                self._alloc()  # new signals made the buffers too big: smaller chunks
        elif not self._direct():  # a run of unknown or large length: the chunk is kept
            self._final = False
            chunk = Chunk(
                t, {n: b[:, :rows].copy() for n, b in self._buf.items()}, self._flushed, self.meta
            )
            self._chunks.append(chunk)
            self._t_done.append(t)
            self._row = 0
            self._flushed += rows
        else:  # the frames go straight into the result arrays; the buffers are reused
            self._final = False
            f0 = self._flushed
            self._reserve(f0 + rows)
            res = self._res
            for n, b in self._buf.items():
                r = res.get(n)
                if r is None:  # a new signal: NaN before (frames of no buffer are NaN-filled)
                    r = res[n] = np.empty((self.n_rows, self._res_len, b.shape[0]))
                    _fill_frames(r, 0, f0)
                _transpose_into(r[:, f0 : f0 + rows], b[:, :rows])
            for n, r in res.items():
                if n not in self._buf:
                    _fill_frames(r, f0, f0 + rows)
            self._t_done.append(t)
            self._row = 0
            self._flushed += rows

    def _direct(self) -> bool:
        """Whether the frames go straight into the result arrays (no sink): the run said how
        many frames it records (``frames_hint``) and they fit in ``_RESULT_AHEAD_BYTES``.
        Otherwise the chunks are kept and the arrays built by :meth:`signals` (their length
        known then): a run that stops long before its end touches no memory it never fills.
        """
        if self._res:
            return True
        if self._chunks:
            return False
        hint = self.frames_hint
        return hint is not None and hint * self._bytes_per_frame() <= _RESULT_AHEAD_BYTES

    def _reserve(self, frames: int) -> None:
        """Make the result arrays hold ``frames`` frames and be the recorder's own (no sink).

        They are allocated uninitialised, as long as the run says it will be
        (``frames_hint``) but at most ``_RESULT_AHEAD_BYTES`` ahead of the frames (a run
        that stops early; a vehicle's row holds all its frames, so the pages reserved are
        touched by the first frames), or, unknown, growing geometrically; they grow at least
        twofold (no quadratic copying).  Arrays given out in a result are copied first (copy
        on write).
        """
        if frames <= self._res_len and not self._handed:
            return
        ahead = frames + _RESULT_AHEAD_BYTES // self._bytes_per_frame()
        hint = self.frames_hint or 0
        grown = 2 * self._res_len
        cap = max(frames, min(max(hint, grown), max(ahead, grown)))
        keep = min(self._flushed, self._res_len)
        new = {}
        for n, r in self._res.items():
            a = new[n] = np.empty((self.n_rows, cap, r.shape[2]))
            if keep:
                _copy_frames(a, r, keep)
        self._res, self._res_len, self._handed = new, cap, False

    # snapshots --------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """Snapshot (frame count, decimation phase and current values)."""
        return {
            "n": self.frames,
            "ticks": self._ticks,
            "pending": self._pending,
            "current": {k: v.copy() for k, v in self.current.items()},
            "units": dict(self.units),
            "labels": dict(self.labels),
            "held": {k: v.copy() for k, v in self.held.items()},
            "held_units": dict(self.held_units),
            "frozen": (self._fidx.copy(), {k: v.copy() for k, v in self._fval.items()}),
        }

    def set_state(self, snap: dict[str, Any]) -> None:
        """Truncate back to a snapshot (not before frames already streamed to the sink)."""
        n = int(snap["n"])
        if self.sink is not None:
            if n < self._flushed:
                raise EngineError(
                    f"cannot restore to frame {n}: frames up to {self._flushed} are already "
                    "written to the streamed log"
                )
            self._row = n - self._flushed
            for b in self._buf.values():
                b[:, self._row :] = np.nan
        elif self._chunks:
            self.flush()
            kept: list[Chunk] = []
            for c in self._chunks:
                if c.first_frame >= n:
                    break
                m = n - c.first_frame
                if m < len(c.t):
                    c = Chunk(
                        c.t[:m], {k: v[:, :m] for k, v in c.values.items()}, c.first_frame, c.meta
                    )
                kept.append(c)
            self._chunks = kept
            self._t_done = [c.t for c in kept]
            self._flushed = n
            self._row = 0
        else:
            self.flush()
            times = self.times[:n]
            self._t_done = [times] if len(times) else []
            self._flushed = min(n, self._flushed)
            self._row = 0
            if self._handed:  # frames n… will be rewritten: not in the result given out
                self._reserve(self._flushed)
            self._flushed = n
        self.current = {k: v.copy() for k, v in snap["current"].items()}
        self.units = dict(snap["units"])
        self.labels = dict(snap["labels"])
        self.held = {k: v.copy() for k, v in snap.get("held", {}).items()}
        self.held_units = dict(snap.get("held_units", {}))
        fidx, fval = snap.get("frozen", (np.zeros(0, dtype=np.int64), {}))
        self._fidx = fidx.copy()
        self._fval = {k: v.copy() for k, v in fval.items()}
        self._buf = {k: v for k, v in self._buf.items() if k in self.units}
        self._res = {k: v for k, v in self._res.items() if k in self.units}
        self._ticks = int(snap["ticks"])
        self._pending = snap["pending"]
        self._final = False
        if self.sink is None:
            self._cap = 0  # fresh NaN buffers: no stale rows of dropped signals

    # assembling -------------------------------------------------------------------------
    def signals(self, block_order: list[str] | None = None) -> dict[str, Signal]:
        """The (N, T, k) array of every signal recorded in memory (NaN where a block lacks it).

        The arrays were filled chunk by chunk during the run.  After :meth:`finish` (the
        run's final result) they are handed out as they are, trimmed in place to the T
        frames recorded; should the recorder record again (a snapshot restored after the
        end), it first copies the frames it keeps from them.  Before (a paused run's
        result) the result gets copies: the recorder goes on writing to its arrays.
        """
        if block_order is not None and list(block_order) != list(self.block_sizes):
            raise EngineError("recorder block order differs from the simulation's")
        self.flush()
        tt = self._flushed
        out: dict[str, Signal] = {}
        if self._chunks:
            for name in self.units:
                vals = _from_chunks(self._chunks, name, self.n_rows, tt, len(self.labels[name]))
                out[name] = Signal(vals, self.units[name], self.labels[name])
            return out
        for name in self.units:
            k = len(self.labels[name])
            r = self._res.get(name)
            if r is None:
                vals = np.full((self.n_rows, tt, k), np.nan)
            elif not self._final or self._handed:  # (a second result: its own copy)
                vals = np.empty((self.n_rows, tt, k))
                _copy_frames(vals, r, tt)
            else:
                if r.shape[1] != tt:
                    r = self._res[name] = _trim(r, tt)
                vals = r
            out[name] = Signal(vals, self.units[name], self.labels[name])
        if self._final:
            self._res = {n: r for n, r in self._res.items() if n in self.units}
            self._res_len = tt
            self._handed = True
        return out


def _from_chunks(
    chunks: list[Chunk], name: str, n_rows: int, frames: int, k: int
) -> NDArray[np.float64]:
    """The (N, T, k) array of ``name`` from kept chunks: one array, each chunk's (k, T_c, N)
    values transposed into its frames (NaN where a chunk lacks the signal)."""
    pieces = [(c.first_frame, c.values[name]) for c in chunks if name in c.values]
    covered = sum(v.shape[1] for _f, v in pieces) == frames
    vals = np.empty((n_rows, frames, k)) if covered else np.full((n_rows, frames, k), np.nan)
    for f0, v in pieces:
        _transpose_into(vals[:, f0 : f0 + v.shape[1]], v)
    return vals


def _step(src_frames: int, k: int) -> int:
    """Vehicles per block of a transpose of ``src_frames`` frames of ``k`` components."""
    return max(16, _BLOCK_BYTES // max(1, 8 * k * src_frames))


def _transpose_into(dst: NDArray[np.float64], src: NDArray[np.float64]) -> None:
    """``dst[i, t, j] = src[j, t, i]`` (dst (N, T, k), src (k, T, N)), one component at a
    time (numpy's 2-D transposed copy: long inner loops over the vehicles)."""
    for j in range(src.shape[0]):
        dst[:, :, j] = src[j].T


def _fill_frames(r: NDArray[np.float64], f0: int, f1: int) -> None:
    """NaN in frames f0 … f1 − 1 of a result array (N, T, k)."""
    if f1 > f0:
        r[:, f0:f1] = np.nan


def _copy_frames(dst: NDArray[np.float64], src: NDArray[np.float64], frames: int) -> None:
    """The first ``frames`` frames of ``src`` (N, T, k) into ``dst`` (N, T', k)."""
    step = _step(frames, src.shape[2])
    for i in range(0, src.shape[0], step):
        dst[i : i + step, :frames] = src[i : i + step, :frames]


def _trim(r: NDArray[np.float64], frames: int) -> NDArray[np.float64]:
    """``r[:, :frames]`` (N, T_cap, k) as a C-contiguous (N, frames, k) array, moved in place
    to the front of ``r``'s memory (a vehicle block at a time; each block's destination
    ends before the next block's source begins), or copied when most of ``r`` would idle."""
    n, cap, k = r.shape
    if 2 * frames < cap:
        out = np.empty((n, frames, k))
        _copy_frames(out, r, frames)
        return out
    flat = r.reshape(-1)
    step = _step(cap, k)
    row = frames * k
    for i in range(0, n, step):
        j = min(n, i + step)
        flat[i * row : j * row] = r[i:j, :frames].reshape(-1)  # numpy buffers the overlap
    return flat[: n * row].reshape(n, frames, k)
