"""The MOOS app's start: the start record, posted before numpy and the model load.

pAntler launches the simulator and, a fraction of a second later, the helm, the PID and the
timers; they act on the first ``NAV_*`` they see.  Importing numpy, pyproj and the model
takes 0.3–2 s, i.e. 3–20 MOOS s at warp 10.  So the start is split:

1. **Start record.**  What the model publishes at its first iteration (at the start-up time,
   before any mail: the start pose, the drift summaries), and — when the model shows them
   to be the same on two different time grids — the publications of the following
   iterations while no mail comes (the *hold* packets).  It is computed by the model
   itself (:meth:`marinesim.interop.moos.app.UsmMoosApp.start_record`) and stored in a
   cache keyed by the mission file's bytes, the name, block and variant, and the size and
   modification time of every source file of the model and of this bridge (and the
   installed pyproj): any change computes it again.  There is no second copy of the law
   here: this module only replays what the model wrote.
2. **Join** (:func:`join`): connect, register (twice, as the programs do), post iteration 1
   (``<NAME>_STATUS``, the record, ``APPCAST``) — standard library and the MOOS client only.
3. **Hold** (:class:`Prestart`): while the model loads, a thread posts the hold packets on
   the AppTick schedule until the first mail the model would act on arrives (that mail, and
   the rest, wait for the model).
4. **Hand-over**: the model replays every posted iteration at its time and checks that it
   publishes the same (a difference is reported), then runs on.

Without a cached record (the first launch of a mission file), the model is loaded first,
the record is computed and stored, and steps 2–4 follow.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import zlib
from pathlib import Path
from typing import Any

from marinesim.interop.moos.client import MoosClient
from marinesim.interop.moos.wire import MoosMsg

__all__ = [
    "QUIET",
    "Prestart",
    "appcast_text",
    "cache_dir",
    "join",
    "load_record",
    "record_key",
    "save_record",
    "status_text",
]

#: Bump when the record's layout changes.
FORMAT = 1
#: Variables the app registers but the model does not act on.
QUIET = frozenset(
    {"APPCAST_REQ", "LOADCAST_REQ", "TERM_REPORT_INTERVAL", "COMMS_POLICY", "WIND_CONDITIONS"}
)
#: ``<NAME>_STATUS`` period [MOOS s].
STATUS_PERIOD = 2.0
_SERVER = ("serverhost", "serverport")
#: Source files whose change invalidates a stored record (relative to the package).
_LAW = (
    "models/usm",
    "core/geodesy.py",
    "core/frames.py",
    "interop/moos/app.py",
    "interop/moos/files.py",
    "interop/moos/moosfile.py",
    "interop/moos/startup.py",
)


def status_text(name: str, uptime: float, subscriptions: Any, published: Any) -> str:
    """``<NAME>_STATUS``'s value (the AppCasting status line of a MOOS-IvP app)."""
    subs = ",".join(sorted(subscriptions))
    pubs = ",".join(sorted(published))
    return (
        f"AppErrorFlag=false,Uptime={uptime:.6g},cpuload=0,memory_kb=0,"
        f"memory_max_kb=0,MOOSName={name},"
        f'Publishing="{pubs},",Subscribing="{subs},"'
    )


def appcast_text(name: str, iteration: int, community: str, pose: str, warnings: list[str]) -> str:
    """``APPCAST``'s value: the pose line and the last run warnings."""
    lines = [pose, f"Run warnings: {len(warnings)}", *(f"  {w}" for w in warnings[-5:])]
    return f"proc={name}!@#iter={iteration}!@#node={community}!@#messages=" + "!@".join(lines)


# ---------------------------------------------------------------------- the record cache
def cache_dir() -> Path:
    """``$MARINESIM_CACHE_DIR/moos-start``, else ``$XDG_CACHE_HOME/marinesim/moos-start``,
    else ``~/.cache/marinesim/moos-start``."""
    root = os.environ.get("MARINESIM_CACHE_DIR")
    if root:
        return Path(root) / "moos-start"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "marinesim" / "moos-start"


def _fingerprint() -> str:
    root = Path(__file__).resolve().parents[2]
    parts = [sys.version, str(FORMAT)]
    for rel in _LAW:
        p = root / rel
        for f in sorted(p.glob("*.py")) if p.is_dir() else [p]:
            with contextlib.suppress(OSError):
                st = f.stat()
                parts.append(f"{rel}/{f.name}:{st.st_size}:{st.st_mtime_ns}")
    for entry in sys.path:  # the installed pyproj (its PROJ data decides the lat/long)
        init = Path(entry or ".") / "pyproj" / "__init__.py"
        with contextlib.suppress(OSError):
            st = init.stat()
            parts.append(f"pyproj:{init}:{st.st_size}:{st.st_mtime_ns}")
            break
    return "\n".join(parts)


def record_key(mission: Path, **choices: Any) -> tuple[str, str, int] | None:
    """The cache key of a launch and the DB's host and port, or None (the mission cannot be
    read or parsed: the full start reports why).

    The key is the source fingerprint, the mission file's text without its ``ServerHost`` /
    ``ServerPort`` lines (a batch gives every run its own port: the record is the same) and
    the launch's choices, compared whole (a CRC only names the file: no hashing library to
    import on the start path).
    """
    import warnings

    from marinesim.interop.moos.moosfile import MoosFile

    try:
        text = Path(mission).read_bytes().decode("utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the full start reports them
            mf = MoosFile.parse(text, path=Path(mission))
        host = (mf.global_value("ServerHost") or "localhost").strip()
        port = int(float(mf.global_value("ServerPort") or 9000))
    except Exception:  # noqa: BLE001 - any trouble: the full start explains it
        return None
    drop = {line for k, (_v, line) in mf.globals.items() if k.lower() in _SERVER}
    kept = "\n".join(t for i, t in enumerate(text.splitlines(), 1) if i not in drop)
    choice = json.dumps(choices, sort_keys=True, default=str)
    return "\0".join((_fingerprint(), kept, choice)), host, port


def _path(key: str) -> Path:
    data = key.encode("utf-8")
    return cache_dir() / f"{zlib.crc32(data):08x}-{len(data)}.json"


def load_record(key: str | None) -> dict[str, Any] | None:
    """The stored record of ``key``, or None (absent, unreadable, another format or key)."""
    if key is None:
        return None
    try:
        rec = json.loads(_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(rec, dict) and rec.get("format") == FORMAT and rec.get("key") == key
    return rec if ok else None


def save_record(key: str | None, record: dict[str, Any]) -> bool:
    """Store ``record`` under ``key``; False when it could not be (no key, or a folder that
    cannot be written: a cache, so the launch goes on)."""
    if key is None:
        return False
    path = _path(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**record, "format": FORMAT, "key": key}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return False
    return True


# ---------------------------------------------------------------------- join and hold
def _items(packet: list[list[Any]]) -> list[tuple[str, float | str]]:
    return [(str(k), v if isinstance(v, str) else float(v)) for k, v in packet]


class Prestart:
    """A joined client that has posted iteration 1 and may hold the start state.

    Attributes
    ----------
    client : MoosClient
    t0 : float
        MOOS time of start-up (iteration 1's stamp).
    posted : list of (float, list of (str, value), bool)
        Every iteration posted before the hand-over: MOOS time, items, delivered.
    last_status : float
        MOOS time of the last ``<NAME>_STATUS``.
    """

    def __init__(self, client: MoosClient, record: dict[str, Any], t0: float) -> None:
        self.client = client
        self.record = record
        self.t0 = t0
        self.posted: list[tuple[float, list[tuple[str, float | str]], bool]] = []
        self.inbox: list[MoosMsg] = []
        self.last_status = t0
        self.published: dict[str, None] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def iterations(self) -> int:
        return len(self.posted)

    def post(self, items: list[tuple[str, float | str]], now: float) -> None:
        delivered = self.client.post(items, now)
        self.posted.append((now, items, delivered))
        for k, _ in items:
            self.published.setdefault(k, None)

    def hold(self) -> None:
        """Post the hold packets on schedule (a thread) until mail or :meth:`handover`."""
        packets = [_items(p) for p in self.record.get("hold") or []]
        if packets:
            self._thread = threading.Thread(target=self._hold, args=(packets,), daemon=True)
            self._thread.start()

    def _hold(self, packets: list[list[tuple[str, float | str]]]) -> None:
        s = self.record["settings"]
        period = 1.0 / (s["app_tick"] * s["time_warp"])
        name, subs = s["name"], self.record["subscriptions"]
        clock = self.client._clock
        next_wall = clock() + period
        k = 0
        while not self._stop.is_set() and self.client.connected:
            left = next_wall - clock()
            if left > 0:
                mail = self.client.fetch(timeout=min(left, 0.05))
                self.inbox += mail
                # mail the model must act on ends the hold (not our own posts: V22 registers
                # its NAV_X / NAV_Y / NAV_HEADING and gets them back)
                if any(m.key not in QUIET and m.src != name for m in mail):
                    return
                continue
            next_wall += period
            now = self.client.moos_time()
            items = list(packets[k % len(packets)])
            k += 1
            if now - self.last_status >= STATUS_PERIOD:
                self.last_status = now
                text = status_text(name, now - self.t0, subs, self.published)
                items.insert(0, (f"{name.upper()}_STATUS", text))
            if self._stop.is_set():
                return
            self.post(items, now)

    def handover(self) -> list[MoosMsg]:
        """Stop holding; the mail received meanwhile (in arrival order)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        inbox, self.inbox = self.inbox, []
        return inbox


def join(
    client: MoosClient,
    record: dict[str, Any],
    *,
    connect_retry: float | None,
    warnings: list[str] | None = None,
) -> Prestart:
    """Connect, register twice and post iteration 1 of ``record`` (status, record, AppCast).

    Raises
    ------
    MoosConnectionError
        The DB is unreachable (after ``connect_retry`` wall seconds) or refused the name.
    """
    s = record["settings"]
    subs = record["subscriptions"]
    client.connect(retry_for=connect_retry)
    client.register(subs)
    client.register(subs)  # the programs register twice
    t0 = client.moos_time()
    pre = Prestart(client, record, t0)
    name = s["name"]
    items: list[tuple[str, float | str]] = [
        (f"{name.upper()}_STATUS", status_text(name, 0.0, subs, ())),
        *_items(record["first"]),
        ("APPCAST", appcast_text(name, 1, client.community, record["pose"], warnings or [])),
    ]
    pre.post(items, t0)
    return pre
