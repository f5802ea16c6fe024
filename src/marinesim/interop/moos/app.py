"""``marinesim moos``: the uSimMarine / uSimMarineV22 MOOS app, live in a MOOS community.

The app plays the real program's cycle (spec ``usimmarine.md`` §2.1) on the wall clock:
connect and register (the same 28 / 34 variables, in the same order, twice, as the captures
show), then every AppTick period of **MOOS** time (a wall period of 1/(AppTick × warp)):
fetch the mail that arrived, apply it in arrival order (:func:`~marinesim.models.usm.
apply_mail`, stamped with the iteration's MOOS time read after the fetch), run one
iteration (:class:`~marinesim.models.usm.OneVehicle`, the vehicle's rows kept from one
iteration to the next) and post its publications in one packet stamped with that time.
``<NAME>_STATUS`` goes out every 2 MOOS seconds and ``APPCAST`` at start and on
``APPCAST_REQ``.  Everything posted and received is streamed to an ``.alog``.

Bad conditions: the DB unreachable at start (retries, then a clear error); the DB lost
mid-run (the model keeps iterating and logging, reconnection is tried every wall second and
re-registers); malformed packets (counted, reported at the end); mail of the wrong type
(warned once per variable and source, as the model reports it).
"""

from __future__ import annotations

import csv
import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from marinesim.core.alog import AlogWriter, NodeReporter
from marinesim.core.errors import ConfigError
from marinesim.interop.moos.client import RETRY_PERIOD, MoosClient, MoosConnectionError
from marinesim.interop.moos.files import LoadedConfig
from marinesim.interop.moos.moosfile import MoosFile
from marinesim.interop.moos.startup import (
    QUIET,
    STATUS_PERIOD,
    Prestart,
    appcast_text,
    join,
    status_text,
)
from marinesim.interop.moos.wire import MoosMsg
from marinesim.models import usm as kinematic

__all__ = [
    "APPCAST_VARS",
    "AppReport",
    "MoosSettings",
    "SUBSCRIPTIONS_USM",
    "SUBSCRIPTIONS_V22",
    "UsmMoosApp",
    "moos_settings",
]

#: AppCasting variables every MOOS-IvP app registers first.
APPCAST_VARS = ("APPCAST_REQ", "LOADCAST_REQ", "TERM_REPORT_INTERVAL", "COMMS_POLICY")

#: uSimMarine's registrations, in the order of the capture ``b2_usim_warp1``.
SUBSCRIPTIONS_USM = (
    *APPCAST_VARS,
    "DESIRED_RUDDER", "DESIRED_THRUST", "DESIRED_ELEVATOR", "DESIRED_THRUST_L",
    "DESIRED_THRUST_R", "BUOYANCY_RATE", "WATER_DEPTH", "CURRENT_X", "DRIFT_X", "CURRENT_Y",
    "DRIFT_Y", "DRIFT_VECTOR", "DRIFT_VECTOR_ADD", "DRIFT_VECTOR_MULT", "ROTATE_SPEED",
    "USM_SIM_PAUSED", "USM_RESET", "USM_TURN_RATE", "USM_ENABLED", "OBSTACLE_HIT",
    "TRIM_CONTROL", "BUOYANCY_CONTROL", "THRUST_MODE_REVERSE", "THRUST_MODE_DIFFERENTIAL",
)  # fmt: skip

#: uSimMarineV22's registrations, in the order of the capture ``b_usimv22_warp1``.
SUBSCRIPTIONS_V22 = (
    *APPCAST_VARS,
    "DESIRED_RUDDER", "DESIRED_THRUST", "DESIRED_ELEVATOR", "DESIRED_THRUST_L",
    "DESIRED_THRUST_R", "NAV_X", "NAV_Y", "NAV_HEADING", "USM_ENABLED", "USM_TURN_RADIUS",
    "USM_TURN_RATE", "OBSTACLE_HIT", "USM_RESET_NAV", "WIND_CONDITIONS", "BUOYANCY_RATE",
    "WATER_DEPTH", "CURRENT_X", "DRIFT_X", "CURRENT_Y", "DRIFT_Y", "DRIFT_VECTOR",
    "DRIFT_VECTOR_ADD", "DRIFT_VECTOR_MULT", "ROTATE_SPEED", "USM_SIM_PAUSED", "USM_RESET",
    "TRIM_CONTROL", "BUOYANCY_CONTROL", "THRUST_MODE_REVERSE", "THRUST_MODE_DIFFERENTIAL",
)  # fmt: skip

#: Variables the app registers but the model does not act on (accepted silently).
_QUIET = QUIET

#: What the app says once the model iterates (after the start record's hand-over).
READY = "model running"
#: MOOS's defaults when the file does not say.
DEFAULT_HOST, DEFAULT_PORT, DEFAULT_TICK = "localhost", 9000, 5.0


@dataclass(frozen=True)
class MoosSettings:
    """Where and how fast the app runs (globals of the mission file and its block).

    Attributes
    ----------
    host, port : str, int
        ``ServerHost`` / ``ServerPort``.
    community : str
        ``Community`` (informational: the DB names it in its WELCOME).
    time_warp : float
        ``MOOSTimeWarp``.
    app_tick, comms_tick : float
        Iterations per MOOS second; CommsTick (informational in asynchronous mode).
    name : str
        Process name (``--alias`` or the block name).
    """

    host: str
    port: int
    community: str
    time_warp: float
    app_tick: float
    comms_tick: float
    name: str


def _number(mf: MoosFile, name: str, default: float, *, positive: bool = True) -> float:
    text = mf.global_value(name)
    if text is None:
        return default
    line = mf.globals[next(k for k in mf.globals if k.lower() == name.lower())][1]
    try:
        val = float(text)
    except ValueError:
        raise ConfigError(
            f"{text!r} is not a number", file=mf.path, line=line, param=name
        ) from None
    if not math.isfinite(val) or (positive and val <= 0):
        raise ConfigError(
            f"must be a finite number > 0, got {text!r}", file=mf.path, line=line, param=name
        )
    return val


def _block_number(loaded: LoadedConfig, key: str, default: float) -> float:
    blk = loaded.moos.block(loaded.block)
    for k, v, line in blk.entries:
        if k.lower() == key.lower():
            try:
                val = float(v)
            except ValueError:
                raise ConfigError(
                    f"{v!r} is not a number", file=loaded.moos.path, line=line, param=key
                ) from None
            if not (math.isfinite(val) and val > 0):
                raise ConfigError(
                    f"must be > 0, got {v!r}", file=loaded.moos.path, line=line, param=key
                )
            return val
    return default


def moos_settings(loaded: LoadedConfig, *, alias: str | None = None) -> MoosSettings:
    """Read ServerHost, ServerPort, Community, MOOSTimeWarp, AppTick and CommsTick.

    Raises
    ------
    ConfigError
        A non-numeric or non-positive port, warp or tick (file, line and parameter named).
    """
    mf = loaded.moos
    port = _number(mf, "ServerPort", DEFAULT_PORT)
    if port != int(port) or not 0 < port < 65536:
        raise ConfigError(f"port {port:g} is not in 1..65535", file=mf.path, param="ServerPort")
    return MoosSettings(
        host=(mf.global_value("ServerHost") or DEFAULT_HOST).strip(),
        port=int(port),
        community=(mf.global_value("Community") or "").strip(),
        time_warp=_number(mf, "MOOSTimeWarp", 1.0),
        app_tick=_block_number(loaded, "AppTick", DEFAULT_TICK),
        comms_tick=_block_number(loaded, "CommsTick", DEFAULT_TICK),
        name=alias or loaded.block,
    )


@dataclass
class AppReport:
    """What a ``marinesim moos`` session did.

    Attributes
    ----------
    iterations : int
    mail : int
        NOTIFY messages received.
    posts : int
        Variables posted.
    warnings : list of str
        Distinct mail warnings (wrong type, unknown variable, non-finite value).
    malformed : int
        Malformed packets skipped.
    reconnects : int
    undelivered : int
        Posts made while the DB was away (logged with source ``<name>:undelivered``).
    log : Path or None
        The ``.alog`` written.
    moos_start, moos_end : float
        MOOS times of start-up and of the last iteration [s].
    max_gap : float
        Longest MOOS time between two iterations [s] (AppTick period when on time).
    late : int
        Iterations that came more than twice the AppTick period after the previous one
        (the process was starved of CPU: the model integrates over the longer step, and the
        track then differs from an on-time run).
    """

    iterations: int = 0
    mail: int = 0
    posts: int = 0
    warnings: list[str] = field(default_factory=list)
    malformed: int = 0
    reconnects: int = 0
    undelivered: int = 0
    log: Path | None = None
    moos_start: float = math.nan
    moos_end: float = math.nan
    max_gap: float = 0.0
    late: int = 0

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"{self.iterations} iterations over {self.moos_end - self.moos_start:.2f} MOOS s, "
            f"{self.mail} mail, {self.posts} posts, {len(self.warnings)} warnings, "
            f"{self.malformed} malformed packets, {self.reconnects} reconnections, "
            f"{self.undelivered} undelivered posts, "
            f"{self.late} late iterations (longest gap {self.max_gap:.3f} MOOS s)"
            + (f"; log {self.log}" if self.log else "")
        )


def _scalar(v: Any) -> float | str | None:
    x = v[0] if isinstance(v, np.ndarray) else v
    if x is None:
        return None
    if isinstance(x, str):
        return x
    f = float(x)
    return None if math.isnan(f) else f


#: ``(name, value)`` of one vehicle's publications, the unpublished (None, NaN) left out.
_scalars = kinematic.scalar_pubs


_first = itemgetter(0)


def _loggable(posts: list[tuple[str, float | str]]) -> list[tuple[str, float | str]]:
    """The posts that go to the ``.alog``: all but ``<NAME>_STATUS`` and ``APPCAST``."""
    return [kv for kv in posts if kv[0] != "APPCAST" and not kv[0].endswith("_STATUS")]


#: Mail whose iteration is recorded in ``RUN.delivery.csv`` (README §2.5 columns).
DELIVERY_VARS = frozenset(
    {"DESIRED_THRUST", "DESIRED_RUDDER", "DESIRED_ELEVATOR", "DRIFT_X", "DRIFT_Y"}
)


class _DeliveryLog:
    """``RUN.delivery.csv`` beside ``RUN.alog``: the iteration each actuator post reached.

    The same columns as the derived schedules of ``reference/moos_live`` (README §2.5), but
    recorded, not derived: ``marinesim moos replay`` of a marinesim live log then
    reproduces it to the log's rounding.
    """

    def __init__(self, log_path: Path, t0: float) -> None:
        self.path = log_path.with_name(log_path.name.removesuffix(".alog") + ".delivery.csv")
        self.t0 = t0
        self._fh = self.path.open("w", encoding="utf-8", newline="")
        self._csv = csv.writer(self._fh, lineterminator="\n")
        self._csv.writerow(
            ["t_post", "var", "value", "source", "t_iteration", "iterations_after_post"]
        )
        self._pending: list[MoosMsg] = []
        self._recent: deque[float] = deque(maxlen=50)

    def add(self, m: MoosMsg, _now: float) -> None:
        self._pending.append(m)

    def iterated(self, now: float) -> None:
        for m in self._pending:
            after = sum(1 for t in self._recent if t > m.time)
            value = f"{m.dval:.5f}" if m.dtype == "D" else m.sval
            self._csv.writerow(
                [f"{m.time - self.t0:.5f}", m.key, value, m.src, f"{now - self.t0:.5f}", after]
            )
        if self._pending:
            self._pending = []
        self._recent.append(now)

    def close(self) -> None:
        self._fh.close()


class UsmMoosApp:
    """The simulator app: :class:`MoosClient` + the ``usm`` / ``usm_v22`` model.

    Parameters
    ----------
    loaded : LoadedConfig
        The configured block (``compat="moos"`` to behave as the program).
    settings : MoosSettings
    log_path : str or Path, optional
        ``.alog`` to stream posts and mail to.
    say : callable
        Receives progress and warning lines (default: stderr).
    clock : callable
        Wall clock [s].
    """

    #: Warm the model up before joining (a model that compiles) or after (the usm model).
    warm_before_join = False
    #: Join with the model's start record (:mod:`marinesim.interop.moos.startup`).
    fast_start = True

    def __init__(
        self,
        loaded: LoadedConfig,
        settings: MoosSettings,
        *,
        log_path: str | Path | None = None,
        say: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
        client: MoosClient | None = None,
    ) -> None:
        self.loaded = loaded
        self.config = loaded.config
        self.settings = settings
        self.log_path = Path(log_path) if log_path is not None else None
        self.say = say or (lambda s: print(s, file=sys.stderr, flush=True))
        self.clock = clock
        self.client = client or MoosClient(
            settings.host,
            settings.port,
            settings.name,
            time_warp=settings.time_warp,
            clock=clock,
            log=self.say,
        )
        v22 = self.config.variant == "usm_v22"
        self.subscriptions = SUBSCRIPTIONS_V22 if v22 else SUBSCRIPTIONS_USM
        self.report = AppReport()
        self._warned: set[str] = set()
        self._published: dict[str, None] = {}
        #: ``on_iterate(t, pubs)`` after each iteration: MOOS seconds since start-up and the
        #: iteration's publications (e.g. :class:`marinesim.io.mcap.tracks.NavStream`.add).
        self.on_iterate: Callable[[float, list[tuple[str, float | str]]], None] | None = None
        self.node_reporter()  # a bad pNodeReporter block is an error before joining

    # ------------------------------------------------------------------ helpers
    def _warn(self, text: str, key: str) -> None:
        if key in self._warned:
            return
        self._warned.add(key)
        self.report.warnings.append(text)
        self.say(f"warning: {text}")

    def _status(self, now: float, start: float) -> str:
        return status_text(self.settings.name, now - start, self.subscriptions, self._published)

    # ------------------------------------------------------------------ the model
    def _start_model(self, t0: float) -> None:
        """Start-up at MOOS time ``t0`` (spec §2.1: ts = MOOS time at start-up)."""
        self.vehicle = kinematic.OneVehicle(self.config, kinematic.init(self.config, 1, t0))

    @property
    def state(self) -> Any:
        """The model's state (:class:`~marinesim.models.usm.UsmState`, one vehicle)."""
        return self.vehicle.state

    def _warm_up(self) -> None:
        """Run the model's code paths once on a throw-away state before the first iteration.

        The first calls import lazily loaded modules (pyproj for the datum) and fill caches;
        with a model that compiles on first use this took 0.75 s wall, i.e. 7.5 MOOS s at
        warp 10, which stalled the first live iterations while the helm was already driving.
        """
        t = self.clock() * self.settings.time_warp
        st = kinematic.init(self.config, 1, t)
        for k, (key, val) in enumerate(
            (("DESIRED_THRUST", 20.0), ("DESIRED_RUDDER", 5.0), ("DESIRED_ELEVATOR", 0.0))
        ):
            st, _posts, _warns = kinematic.apply_mail(
                self.config, st, key, val, moos_time=t + 0.1 * k, source="warm-up"
            )
        for k in range(5):
            st, _pubs = kinematic.iterate_one(self.config, st, t + 0.1 * (k + 1))

    def _mail(self, m: MoosMsg, now: float) -> list[tuple[str, float | str]]:
        """Apply one message (typed as it came) at the iteration time; immediate posts."""
        value: float | str = m.sval if m.dtype != "D" else m.dval
        posts, warns = self.vehicle.mail(m.key, value, moos_time=now, source=m.src)
        for w in warns:
            kind = w.split(": ", 1)[-1]
            self._warn(w, f"{m.key}|{m.src}|{kind}")
        out = []
        for name, val in posts:
            sv = _scalar(val)
            if sv is not None:
                out.append((name, sv))
        return out

    _scalars = staticmethod(_scalars)

    def _iterate(self, now: float) -> list[tuple[str, float | str]]:
        """One iteration at MOOS time ``now``; its publications in order."""
        return self.vehicle.iterate(now)

    def start_record(self) -> dict[str, Any]:
        """What the model publishes at start-up, for :func:`~marinesim.interop.moos.startup.
        join` (see that module): iteration 1 at the start-up time, and the hold packets when
        iterations 2–5 publish the same on two time grids (nothing moves without mail)."""
        cfg = self.config
        t = self.clock() * self.settings.time_warp
        st, pubs = kinematic.iterate(cfg, kinematic.init(cfg, 1, t), t)
        first = self._scalars(pubs)
        grids = []
        for step in (1.0 / self.settings.app_tick, 1.37 / self.settings.app_tick):
            s2, out = st, []
            for k in range(1, 5):
                s2, p = kinematic.iterate(cfg, s2, t + k * step)
                out.append(self._scalars(p))
            grids.append(out)
        a, b = grids
        static = a == b and a[0] == a[2] and a[1] == a[3]
        s = self.settings
        return {
            "settings": {
                "host": s.host,
                "port": s.port,
                "community": s.community,
                "time_warp": s.time_warp,
                "app_tick": s.app_tick,
                "comms_tick": s.comms_tick,
                "name": s.name,
            },
            "model": cfg.variant,
            "subscriptions": list(self.subscriptions),
            "first": [list(kv) for kv in first],
            "pose": self._pose_text(st),
            "hold": [[list(kv) for kv in p] for p in a[:2]] if static else [],
        }

    def _pose_text(self, state: Any = None) -> str:
        st = self.state if state is None else state
        return (
            f"Enabled: {str(bool(st.enabled[0])).lower()}!@Model: marinesim {self.config.variant}"
            f"!@Pose: x={float(st.x[0]):.2f}, y={float(st.y[0]):.2f}, "
            f"hdg={float(st.heading[0]):.1f}, spd={float(st.speed[0]):.2f}"
        )

    def _appcast(self, iteration: int) -> str:
        return appcast_text(
            self.settings.name,
            iteration,
            self.client.community,
            self._pose_text(),
            self.report.warnings,
        )

    def _reconnect(self) -> None:
        """One reconnection attempt (runs in a helper thread)."""
        try:
            self.client.try_connect(timeout=1.0)
        except MoosConnectionError as exc:  # refused (a name clash): keep trying, say so
            self._warn(str(exc), "reconnect-refused")

    def node_reporter(self) -> NodeReporter:
        """The log's ``NODE_REPORT_LOCAL`` writer: the community as NAME (as pNodeReporter),
        ``platform_type`` / ``platform_length`` of the mission's pNodeReporter block if any
        (else kayak, 4 m)."""
        vtype, length = "kayak", 4.0
        block = self.loaded.moos.find_block("pNodeReporter")
        for key, value, line in block.entries if block is not None else []:
            if key.lower() == "platform_type" and value:
                vtype = value
            elif key.lower() == "platform_length":
                try:
                    length = float(value)
                except ValueError:
                    raise ConfigError(
                        f"not a number: {value!r}",
                        file=self.loaded.moos.path,
                        line=line,
                        param="pNodeReporter.platform_length",
                    ) from None
        name = self.settings.community or self.settings.name
        return NodeReporter(name, self.config.prefix, vtype=vtype, length=length)

    # ------------------------------------------------------------------ the loop
    def _start(
        self, prestart: Prestart | None, connect_retry: float | None
    ) -> tuple[float, list[tuple[float, list[tuple[str, float | str]], bool]], list[MoosMsg]]:
        """Join (unless ``prestart`` did), start the model and replay what was posted.

        Returns the start-up time, the iterations already posted (time, items, delivered)
        and the mail that arrived meanwhile.
        """
        client = self.client
        if prestart is None and self.fast_start:
            record = self.start_record()  # the model computes iteration 1 (and warms up)
            prestart = join(client, record, connect_retry=connect_retry)
        if prestart is None:  # a model without a start record: join, warm up, then run
            if self.warm_before_join:
                self._warm_up()
            client.connect(retry_for=connect_retry)
            client.register(self.subscriptions)
            if not self.warm_before_join:
                self._warm_up()
            t0 = client.moos_time()
            self._start_model(t0)
            return t0, [], []
        self._warm_up()  # the start record's hold thread posts meanwhile
        inbox = prestart.handover()
        self._start_model(prestart.t0)
        checked = False
        for now, items, _ in prestart.posted:
            want = [kv for kv in items if kv[0] != "APPCAST" and not kv[0].endswith("_STATUS")]
            got = self._iterate(now)
            if got != want and not checked:
                checked = True
                self._warn(
                    f"the start record posted at {now - prestart.t0:.2f} MOOS s differs from "
                    f"the model ({len(want)} against {len(got)} values); the model runs on",
                    "start-record",
                )
        for name in prestart.published:
            self._published.setdefault(name, None)
        self._last_status = prestart.last_status
        return prestart.t0, prestart.posted, inbox

    def run(
        self,
        *,
        duration: float | None = None,
        stop: threading.Event | None = None,
        connect_retry: float | None = 30.0,
        prestart: Prestart | None = None,
    ) -> AppReport:
        """Join the community and simulate until ``duration`` MOOS seconds or ``stop``.

        Parameters
        ----------
        prestart : Prestart, optional
            A client that has already joined and posted iteration 1 from the start record
            (:mod:`marinesim.interop.moos.startup`); without it the app joins itself.

        Raises
        ------
        MoosConnectionError
            The DB is unreachable at start (after ``connect_retry`` wall seconds).
        """
        if prestart is not None:
            self.client = prestart.client
        client = self.client
        stop = stop or threading.Event()
        rep = self.report
        self._last_status = -math.inf
        try:
            t0, posted, inbox = self._start(prestart, connect_retry)
        except BaseException:
            client.close()
            raise
        rep.moos_start = rep.moos_end = t0
        #: ``marinesim moos batch`` starts the helm and the rest on this line
        self.say(f"{self.settings.name}: {READY} at iteration {len(posted) + 1}")
        # flushed every 10 iterations below (1 MOOS s at most lost in a crash), not every
        # 64 lines as well
        alog = (
            AlogWriter(self.log_path, logstart=t0, flush_every=1 << 20) if self.log_path else None
        )
        nodes = self.node_reporter()
        delivery = _DeliveryLog(self.log_path, t0) if self.log_path else None
        if alog is not None:
            rep.log = alog.path
        name = self.settings.name

        def log_posts(
            now: float,
            out: list[tuple[str, float | str]],
            delivered: bool,
            logged: list[tuple[str, float | str]] | None = None,
        ) -> None:
            """Note and log the posts ``out``; ``logged``: those of them that go to the log
            (a list of its own; default: all but the status and appcast posts)."""
            # a post made while the DB is away is logged as such, not as published
            src = name if delivered else name + ":undelivered"
            rep.undelivered += 0 if delivered else len(out)
            rep.posts += len(out)
            # (a key already there keeps its place)
            self._published.update(zip(map(_first, out), repeat(None)))
            if logged is None:
                logged = _loggable(out)
            # the node report reads the NAV posts; <prefix>_X makes a NAV record
            nav = nodes.update_many(logged)
            if alog is None:
                return
            if nav:
                report = nodes.report(now)
                if report is not None:  # log only: the mission's pNodeReporter posts its own
                    logged.append(("NODE_REPORT_LOCAL", report))
            alog.write_many(now, src, logged)

        for now, items, delivered in posted:
            log_posts(now, items, delivered)
            if self.on_iterate is not None:
                pubs0 = _loggable(items)
                self.on_iterate(now - t0, pubs0)
            if delivery is not None:
                delivery.iterated(now)
        iteration = len(posted)
        rep.iterations = iteration
        if posted:
            rep.moos_end = posted[-1][0]
        period = 1.0 / (self.settings.app_tick * self.settings.time_warp)  # wall s
        next_wall = self.clock() + (period if not posted else 0.0)
        last_status = self._last_status
        last_retry = self.clock()
        appcast_due = not posted
        reconnector: threading.Thread | None = None
        try:
            while not stop.is_set():
                # (a) wait one period, collecting the mail the DB pushes meanwhile
                fetched = False  # (a wait that ends in a fetch has just read the socket)
                while True:
                    left = next_wall - self.clock()
                    if left <= 0:
                        break
                    if not client.connected:
                        # reconnect in the background (as MOOS's comms thread does): the
                        # model keeps iterating and logging while the DB is away
                        idle = reconnector is None or not reconnector.is_alive()
                        if idle and self.clock() - last_retry >= RETRY_PERIOD:
                            last_retry = self.clock()
                            reconnector = threading.Thread(target=self._reconnect, daemon=True)
                            reconnector.start()
                        stop.wait(min(left, 0.05))
                        continue
                    inbox += client.fetch(timeout=min(left, 0.05))
                    fetched = True
                    client.heartbeat()
                    if stop.is_set():
                        break
                if stop.is_set():
                    break
                if not fetched:  # running late: what arrived meanwhile
                    inbox += client.fetch(timeout=0.0)
                next_wall += period
                if next_wall < self.clock() - period:  # fell behind: do not burst
                    next_wall = self.clock() + period
                if iteration == 0 and not posted:
                    client.register(self.subscriptions)  # the programs register twice
                # (b) mail, in arrival order, stamped with the iteration time
                now = client.moos_time()
                if iteration > 0:
                    gap = now - rep.moos_end
                    rep.max_gap = max(rep.max_gap, gap)
                    rep.late += gap > 2.0 / self.settings.app_tick
                out: list[tuple[str, float | str]] = []
                for m in inbox:
                    rep.mail += 1
                    if alog is not None and m.src != name:  # not our own echo
                        alog.write(m.time, m.key, m.src, m.value)
                    if delivery is not None and m.key in DELIVERY_VARS:
                        delivery.add(m, now)
                    if m.key in _QUIET:
                        if m.key == "APPCAST_REQ":
                            appcast_due = True
                        continue
                    out += self._mail(m, now)
                inbox = []
                # (c) iterate and publish
                pubs = self._iterate(now)
                # what goes to the log: the mail's posts and the model's publications (never
                # a status or appcast name), not the status and appcast added below
                logged = _loggable(out) + pubs if out else pubs[:]
                iteration += 1
                if self.on_iterate is not None:
                    self.on_iterate(now - t0, pubs)
                if delivery is not None:
                    delivery.iterated(now)
                if now - last_status >= STATUS_PERIOD:
                    last_status = now
                    out.insert(0, (f"{name.upper()}_STATUS", self._status(now, t0)))
                out += pubs
                if appcast_due:
                    appcast_due = False
                    out.append(("APPCAST", self._appcast(iteration)))
                log_posts(now, out, client.post(out, now), logged)
                rep.iterations = iteration
                rep.moos_end = now
                if alog is not None and iteration % 10 == 0:
                    alog.flush()
                if duration is not None and now - t0 >= duration:
                    break
        finally:
            if alog is not None:
                alog.close()
            if delivery is not None:
                delivery.close()
            client.close()
            if reconnector is not None:
                reconnector.join(2.0)
            rep.malformed = client.malformed
            rep.reconnects = client.reconnects
        return rep
