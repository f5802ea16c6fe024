"""A fake MOOSDB for the MOOS client tests (127.0.0.1 only), built from the recorded captures.

It answers as the real MOOSDB 10.5 does in ``reference/moos_live/captures`` (README §1.4):
the WELCOME (source-aux ``hostname=…``, community, double = DB time − the client's stamp,
string ``asynchronous``), a NOTIFY delivered to every subscriber with the community filled
in, the stored value sent at once (id −1) to a new subscriber, TIMING echoed with the DB
time, POISON for a duplicate name.  Tests can inject mail, kill every connection (the DB
dying), restart on the same port and push raw bytes (malformed packets).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from marinesim.interop.moos.fakedb import FakeMoosDB

SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "moos_live"
OFFLINE = Path(__file__).resolve().parents[2] / "data" / "moos_live"


@pytest.fixture(autouse=True, scope="session")
def _private_start_records(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The MOOS app's start records (``marinesim.interop.moos.startup``) go to a folder of
    this test session, not to the user's cache (subprocesses inherit the variable)."""
    import os

    old = os.environ.get("MARINESIM_CACHE_DIR")
    os.environ["MARINESIM_CACHE_DIR"] = str(tmp_path_factory.mktemp("marinesim-cache"))
    yield
    if old is None:
        os.environ.pop("MARINESIM_CACHE_DIR", None)
    else:
        os.environ["MARINESIM_CACHE_DIR"] = old


@pytest.fixture
def fake_db() -> Any:
    """A started FakeMoosDB (factory: ``fake_db(community=..., warp=...)``), stopped after."""
    made: list[FakeMoosDB] = []

    def make(community: str = "fake", *, warp: float = 1.0, port: int = 0) -> FakeMoosDB:
        db = FakeMoosDB(community, warp=warp, port=port).start()
        made.append(db)
        return db

    yield make
    for db in made:
        db.stop()


def capture_dir() -> Path | None:
    """Where the recordings are: ../shared when present, else the shipped copies, else None."""
    if (SHARED / "captures").is_dir():
        return SHARED / "captures"
    if OFFLINE.is_dir():
        return OFFLINE
    return None


def load_capture(path: Path) -> dict[tuple[int, str], bytes]:
    """A capture's bytes reassembled per (connection, direction)."""
    streams: dict[tuple[int, str], bytearray] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("event"):
            continue
        streams.setdefault((r["conn"], r["direction"]), bytearray()).extend(bytes.fromhex(r["hex"]))
    return {k: bytes(v) for k, v in streams.items()}
