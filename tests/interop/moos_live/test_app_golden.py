"""The MOOS app's output, byte for byte, on a fixed clock: every packet it sends and every line
of its ``.alog`` and ``.delivery.csv`` over 60 MOOS s with mail, against checksums recorded
before the app's per-iteration work was made cheaper (the bytes must not change).

The app runs against :class:`_RecordingClient` (a :class:`MoosClient` whose socket is a sink
and whose clock moves only when the app waits): no threads, no network, so the run is the
same every time.  The checksums hold where the model computes the very same numbers (the
model's own publications, hashed before any encoding, say so); elsewhere the platform-free
checks still run: every packet re-encodes with the general encoder and every log line is
:func:`~marinesim.core.alog.format_line` of what was sent.
"""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path
from typing import Any

from marinesim.core.alog import format_line
from marinesim.interop.moos.app import UsmMoosApp, moos_settings
from marinesim.interop.moos.client import MoosClient
from marinesim.interop.moos.files import load_usm_config
from marinesim.interop.moos.wire import MoosMsg, PacketReader, encode_packet

MISSION = """ServerHost   = 127.0.0.1
ServerPort   = 9000
Community    = golden
MOOSTimeWarp = 10
LatOrigin    = 42.358456
LongOrigin   = -71.087589

ProcessConfig = uSimMarine
{
  AppTick    = 10
  CommsTick  = 10
  start_pos  = x=0, y=-10, heading=180, speed=0, depth=0
  prefix     = NAV
  turn_rate  = 70
  thrust_map = 0:0, 20:1, 40:2, 60:3, 80:4, 100:5
}
"""

#: Wall time of the start [s] (MOOS time = 10 × this).
T0 = 1_700_000_000.0
#: (MOOS s after start, variable, value): the mail the fake helm sends.
MAIL = (
    (2.0, "DESIRED_THRUST", 40.0),
    (5.0, "DESIRED_RUDDER", 10.0),
    (8.0, "APPCAST_REQ", "node=golden,app=uSimMarine,duration=3.0,key=x,thresh=any"),
    (20.0, "DESIRED_RUDDER", -5.0),
    (25.0, "DESIRED_RUDDER", "ten"),
    (30.0, "DRIFT_X", 0.5),
    (41.3, "DESIRED_THRUST", 80.0),
    (50.0, "DESIRED_ELEVATOR", 3.0),
)

#: Checksums of the run (recorded before the per-iteration work was made cheaper).
GOLDEN_MODEL = "a990db00dddd6bfef8d27517e06c97327bd5670508364c7bf6d9b3ffbd32f5fa"
GOLDEN_SENT = "61c5d4628fa0297044f896043beaf0f6e96efba8c83f7fc847f3ae6ed95abab4"
GOLDEN_ALOG = "cb501086d14866939b085ac1cfd1ce99ef0a8a8c0fb18141c8b2920785afa357"
GOLDEN_DELIVERY = "376a46232d0afbc1405393b5fa3bfbaf769d1579fda66972fd1ca7a19ed8bb1b"


class _Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


class _Sink:
    def __init__(self) -> None:
        self.data = bytearray()
        self.packets = 0

    def send(self, data: bytes) -> int:
        self.data += data
        self.packets += 1
        return len(data)

    def close(self) -> None:
        pass


class _RecordingClient(MoosClient):
    """Connected at once to a sink; waiting moves the clock; mail comes when it is due."""

    def __init__(self, clock: _Clock, warp: float) -> None:
        super().__init__("127.0.0.1", 9000, "uSimMarine", time_warp=warp, clock=clock)
        self.clock = clock
        self.sink = _Sink()
        self.mail = [(T0 * warp + dt, key, value) for dt, key, value in MAIL]  # MOOS times

    def try_connect(self, timeout: float = 1.0) -> bool:
        self._sock = self.sink  # type: ignore[assignment]
        self.connected = True
        self.community = "golden"
        self.connections += 1
        return True

    def fetch(self, timeout: float = 0.0) -> list[MoosMsg]:
        if timeout > 0:
            self.clock.t += timeout
        now = self.moos_time()
        out = []
        while self.mail and self.mail[0][0] <= now:
            t, key, value = self.mail.pop(0)
            if isinstance(value, str):
                m = MoosMsg("N", "S", key, t, sval=value, src="pHelmIvP", community="golden")
            else:
                m = MoosMsg("N", "D", key, t, dval=value, src="pHelmIvP", community="golden")
            out.append(m)
        return out


def run_golden(
    tmp_path: Path, duration: float = 60.0, *, hash_model: bool = True
) -> dict[str, Any]:
    """Run the app for ``duration`` MOOS s on the fixed clock; what it sent and wrote
    (``hash_model`` False: without hashing the model's publications, as the app runs)."""
    mission = tmp_path / "golden.moos"
    mission.write_text(MISSION, encoding="utf-8")
    loaded = load_usm_config(mission, compat="moos", block="uSimMarine")
    settings = moos_settings(loaded)
    clock = _Clock()
    client = _RecordingClient(clock, settings.time_warp)
    log = tmp_path / "golden.alog"
    app = UsmMoosApp(loaded, settings, log_path=log, say=lambda s: None, clock=clock, client=client)
    model = hashlib.sha256()

    def on_iterate(t: float, pubs: list[tuple[str, float | str]]) -> None:
        model.update(repr((t, pubs)).encode())

    if hash_model:
        app.on_iterate = on_iterate
    rep = app.run(duration=duration, stop=threading.Event(), connect_retry=1.0)
    return {
        "report": rep,
        "sent": bytes(client.sink.data),
        "packets": client.sink.packets,
        "alog": log.read_text(encoding="utf-8"),
        "delivery": log.with_name("golden.delivery.csv").read_text(encoding="utf-8"),
        "model": model.hexdigest(),
    }


def _sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _alog_body(text: str) -> str:
    """The log without the header lines that name the file and the date."""
    return re.sub(r"^%% (LOG FILE|FILE OPENED ON).*\n", "", text, flags=re.MULTILINE)


def test_sent_bytes_and_logs_are_the_recorded_ones(tmp_path: Path) -> None:
    out = run_golden(tmp_path)
    rep = out["report"]
    assert rep.iterations >= 590 and rep.mail == len(MAIL)
    assert len(rep.warnings) == 1 and "DESIRED_RUDDER" in rep.warnings[0]
    # the platform-free part: every packet is the general encoding of what it holds
    reader = PacketReader()
    pkts = reader.feed(out["sent"])
    assert reader.malformed == 0 and reader.pending == 0 and len(pkts) == out["packets"]
    assert b"".join(encode_packet(p) for p in pkts) == out["sent"]
    posted = [m for p in pkts for m in p if m.type == "N"]
    assert len(posted) == rep.posts
    # ... and every logged post is format_line of a sent one (STATUS / APPCAST are not logged)
    lines = out["alog"].splitlines()
    logstart = float(lines[3].split()[2])
    data = [ln for ln in lines if not ln.startswith("%%")]
    expect_nav = [
        format_line(m.time - logstart, m.key, m.src, m.value)
        for m in posted
        if m.key.startswith("NAV_X")
    ]
    logged_nav = [ln for ln in data if ln.split()[1] == "NAV_X" and "uSimMarine" in ln]
    assert logged_nav == expect_nav
    assert sum(1 for ln in data if ln.split()[1] == "NODE_REPORT_LOCAL") == len(expect_nav)
    assert sum(1 for ln in data if ln.split()[2] == "pHelmIvP") == len(MAIL)
    # the recorded bytes, where the model computes the recorded numbers
    if out["model"] != GOLDEN_MODEL:
        return
    assert _sha(out["sent"]) == GOLDEN_SENT
    assert _sha(_alog_body(out["alog"])) == GOLDEN_ALOG
    assert _sha(out["delivery"]) == GOLDEN_DELIVERY


if __name__ == "__main__":  # print the checksums of this tree (to record them)
    import tempfile

    res = run_golden(Path(tempfile.mkdtemp()))
    print("model", res["model"])
    print("sent", _sha(res["sent"]), res["packets"], "packets")
    print("alog", _sha(_alog_body(res["alog"])))
    print("delivery", _sha(res["delivery"]))
