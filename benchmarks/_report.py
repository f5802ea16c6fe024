"""The JSON report the benchmarks write: what, the command, the machine and the results."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

# The benchmarks time compiled runs: a tick missing from the cache is compiled in the timed
# process, waiting for it, not in the background (marinesim.engine.compiled.background), so
# that a run's route does not depend on how fast another process compiles.
os.environ.setdefault("MARINESIM_COMPILE", "wait")


def load_average() -> float | None:
    """The 1-minute load average (None where the platform has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # pragma: no cover - platforms without getloadavg
        return None


def write_report(benchmark: str, command: str, results: Any, path: Path | None) -> dict[str, Any]:
    """Build the report (and write it to ``path`` as JSON unless None); returns it."""
    out = {
        "benchmark": benchmark,
        "command": command,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "results": results,
    }
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=2))
        print(f"written {path}")
    return out
