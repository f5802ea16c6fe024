"""The backend's truth log: a CSV streamed to disk while SITL flies (never held in memory).

One row every ``period`` seconds of physics time (default 0.05 s, like the reference
recordings' ``truth.csv``), columns :data:`~marinesim.interop.sitl.plant.TRUTH_COLUMNS`:
time [s], SITL's µs clock, frame count, NED position [m], roll/pitch/yaw [rad], body
velocity [m/s], body rates [rad/s], body specific force [m/s²], seafloor z [m, up], true
altitude [m], ``rng_1`` sent [m] and SERVO1–8 [µs].  A SITL restart starts a new file
(``truth.csv``, ``truth-1.csv``, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

from marinesim.interop.sitl.plant import TRUTH_COLUMNS, EnginePlant
from marinesim.interop.sitl.protocol import SensorReply, ServoPacket

__all__ = ["TruthLog"]


class TruthLog:
    """Streams decimated truth rows of an :class:`EnginePlant` to CSV files in ``directory``."""

    def __init__(self, plant: EnginePlant, directory: str | Path, period: float = 0.05) -> None:
        self.plant = plant
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.period = float(period)
        self.files: list[Path] = []
        self._fh: IO[str] | None = None
        self._next = 0.0
        self._rows = 0
        self._last_t = -1.0

    def _open(self) -> None:
        self.close()
        n = len(self.files)
        path = self.dir / ("truth.csv" if n == 0 else f"truth-{n}.csv")
        self.files.append(path)
        self._fh = path.open("w", encoding="utf-8")
        self._fh.write(",".join(TRUTH_COLUMNS) + "\n")
        self._next = 0.0

    def __call__(self, pkt: ServoPacket, reply: SensorReply, sitl_time_us: int) -> None:
        """Lockstep ``on_frame`` hook."""
        t = float(reply.timestamp)
        if self._fh is None or t < self._last_t:
            self._open()
        self._last_t = t
        if t + 1e-9 < self._next:
            return
        self._next = (int(t / self.period + 1e-9) + 1) * self.period
        # one write() per row: a signal between two calls never leaves half a row
        row = self.plant.truth_row(sitl_time_us, pkt.frame_count)
        assert self._fh is not None
        self._fh.write(",".join([repr(float(v)) for v in row]) + "\n")
        self._rows += 1
        if self._rows % 20 == 0:
            self._fh.flush()

    def close(self) -> None:
        """Flush and close the current file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None
