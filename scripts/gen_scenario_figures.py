"""Draw the figure of every bundled scenario for the documentation (docs/assets/scenarios/).

Each scenario runs as a user would run it (``marinesim run NAME``); its main figure is shrunk
to a palette PNG under 200 KB and saved as ``docs/assets/scenarios/NAME.png``. The two
``ardusub_*`` scenarios need a running ArduSub SITL, so their page shows marinesim's own
SURFTRAK over the same seafloor (``marinesim surftrak run --terrain ...``). The demo's
trajectory is also the front page's figure (``docs/assets/demo_survey.png``).

Usage (from the repository root; a few minutes for all of them)::

    python scripts/gen_scenario_figures.py               # every bundled scenario
    python scripts/gen_scenario_figures.py demo_survey   # some of them
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "assets" / "scenarios"
FRONT = ROOT / "docs" / "assets" / "demo_survey.png"
MAX_BYTES = 200_000
WIDTH = 1000

#: The figure (name prefix) that shows a scenario best (default: the trajectory).
MAIN_FIGURE = {
    "bluerov2_station_keeping": "sixdof_timeseries",
    "bluerov2_thruster_failure": "sixdof_timeseries",
    "supply_dp_current": "dp_error",
    "surftrak_sawtooth": "surftrak",
    "tanker_heading_autopilot": "autopilot",
    "torpedo_depth_heading": "sixdof_timeseries",
}
#: Scenarios served to ArduSub SITL: the terrain their rangefinder replays.
SITL_TERRAIN = {"ardusub_sawtooth": "sawtooth", "ardusub_trapezoid": "trapezoid"}


def shrink(src: Path, dst: Path) -> int:
    """Save ``src`` as a palette PNG at most ``WIDTH`` pixels wide; return its size [bytes]."""
    img = Image.open(src).convert("RGB")
    if img.width > WIDTH:
        img = img.resize((WIDTH, round(img.height * WIDTH / img.width)), Image.Resampling.LANCZOS)
    dst.parent.mkdir(parents=True, exist_ok=True)
    img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(dst, optimize=True)
    size = dst.stat().st_size
    if size > MAX_BYTES:
        raise SystemExit(f"{dst}: {size} bytes, over {MAX_BYTES}")
    return size


def _marinesim(*args: str, cwd: Path) -> None:
    cmd = [sys.executable, "-m", "marinesim", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")


def _pick(work: Path, prefer: str) -> Path:
    """The figure of a run folder whose name starts with ``prefer`` (else the first one)."""
    pngs = sorted(work.rglob("*.png"))
    if not pngs:
        raise SystemExit(f"{work.name}: the run drew no figure")
    return next((p for p in pngs if p.name.startswith(prefer)), pngs[0])


def figure(name: str, work: Path) -> Path:
    """Run one scenario in ``work``; return its main figure."""
    # relative output paths: figure titles name the scenario, not a temporary folder
    if name in SITL_TERRAIN:
        _marinesim("surftrak", "run", "--terrain", SITL_TERRAIN[name], "--duration", "150",
                   "--seed", "1", "-o", work.name, "--plot", cwd=work.parent)
        return _pick(work, "surftrak")
    _marinesim("run", name, "-o", work.name, "--no-progress", cwd=work.parent)
    return _pick(work, MAIN_FIGURE.get(name, "trajectory"))


def main(argv: list[str] | None = None) -> int:
    from marinesim.scenario import builtin_names

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="scenarios (default: every bundled one)")
    args = ap.parse_args(argv)
    names = args.names or list(builtin_names())
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            src = figure(name, Path(tmp) / name)
            size = shrink(src, OUT / f"{name}.png")
            print(f"{name}: {src.name} -> docs/assets/scenarios/{name}.png ({size // 1000} kB)")
            if name == "demo_survey":
                shutil.copyfile(OUT / f"{name}.png", FRONT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
