"""Compile a generated tick in another process while the run goes on through the plugins.

The first run of a plugin set must compile its tick (numba: seconds to a minute on a small
machine), and the same run's first plugin ticks compile the plugins' own kernels too.  Done one
after the other, a first run waits for both.  Instead, when a run (``Simulation.run``, its
``compiled`` left at None) finds its tick missing from the disk cache, :func:`start` launches
``python -m marinesim.engine.compiled.background TICK SIG run``: that process compiles the tick for
the argument types the run will call it with (``SIG``, pickled numba types) into numba's disk
cache, under the plugin set's compile lock.  Meanwhile the run's ticks go through the plugins,
which give the same bits; once the process has exited, the route loads the machine code from
the cache and the rest of the run is compiled.  A run that ends first leaves the process to
finish (it runs in a session of its own, so a Ctrl-C of the run does not stop it): the next
run finds the tick cached.

``MARINESIM_COMPILE=wait`` (and ``Simulation.compiled = True``, and the externally clocked
``Simulation.step``) compiles in the run's own process instead, waiting for it, as before.
A process that fails (a read-only cache, a crash) leaves its output in ``tick_<digest>.bg.log``
beside the tick; the run then compiles in its own process.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["Job", "allowed", "child_env", "start"]


def child_env() -> dict[str, str]:
    """The environment of a compile process: this one's, with the folders of ``sys.path`` that
    the interpreter does not add by itself put on ``PYTHONPATH``, so that the law functions of
    a plugin imported from there (a script's folder, ``sys.path.insert``) import in the child
    too (as ``multiprocessing`` passes ``sys.path`` to the processes it spawns)."""
    own = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    extra = [os.path.abspath(p or os.curdir) for p in sys.path if not p or not p.startswith(own)]
    env = dict(os.environ)
    old = env.get("PYTHONPATH", "")
    paths = [*dict.fromkeys(extra), *(x for x in old.split(os.pathsep) if x)]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def allowed() -> bool:
    """Whether a tick may compile in the background (``MARINESIM_COMPILE`` is not ``wait``)."""
    mode = os.environ.get("MARINESIM_COMPILE", "background").strip().lower()
    return mode != "wait"


class Job:
    """A background compile of one tick (its process, start time and log file)."""

    def __init__(self, proc: subprocess.Popen[bytes], log: Path) -> None:
        self.proc = proc
        self.log = log
        self.t0 = time.perf_counter()

    def state(self) -> str:
        """``running``, ``done`` (the tick is in the disk cache) or ``failed``."""
        rc = self.proc.poll()
        if rc is None:
            return "running"
        return "done" if rc == 0 else "failed"

    @property
    def seconds(self) -> float:
        """Wall-clock seconds since the start."""
        return time.perf_counter() - self.t0


def start(path: Path, args: tuple[Any, ...], *, saved: bool = False) -> Job | None:
    """Launch the compile of the tick in ``path`` (the generated module's file: its
    ``tick_run``, or ``tick_loop`` when ``saved``) for the types of ``args`` (one call's
    arguments); None when it cannot start (then compile here)."""
    import numba

    try:
        sig = tuple(numba.typeof(a) for a in args)
        sigfile = path.with_suffix(f".{os.getpid()}.sig")
        sigfile.write_bytes(pickle.dumps(sig))
        log = path.with_suffix(".bg.log")
        with open(log, "wb") as out:
            proc = subprocess.Popen(  # noqa: S603 - our own module, with our own interpreter
                [sys.executable, "-m", "marinesim.engine.compiled.background", str(path), str(sigfile),
                 "saved" if saved else "run"],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=child_env(),
                start_new_session=True,  # a Ctrl-C of the run leaves it to fill the cache
            )
    except (OSError, ValueError, TypeError, pickle.PicklingError):
        return None
    return Job(proc, log)


def compile_file(path: Path, sig: tuple[Any, ...], *, saved: bool = False) -> None:
    """Compile ``tick_run`` (``tick_loop`` when ``saved``) of the generated module ``path``
    for ``sig`` into numba's disk cache, as the run's own process would
    (:func:`~marinesim.engine.compiled.generate.jit_tick`), under the plugin set's compile
    lock."""
    from marinesim.engine.compiled import lawfunc
    from marinesim.engine.compiled.generate import file_lock, jit_tick, tick_module

    mod = tick_module(path)
    fn = jit_tick(mod, saved=saved)
    with file_lock(path.with_suffix(".lock")):
        lawfunc.load(mod)  # its law functions first (several processes)
        fn.compile(sig)


def main(argv: list[str]) -> int:
    """``python -m marinesim.engine.compiled.background TICK SIG [run|saved]``."""
    path, sigfile = Path(argv[0]), Path(argv[1])
    saved = len(argv) > 2 and argv[2] == "saved"
    try:
        sig = pickle.loads(sigfile.read_bytes())  # noqa: S301 - written by the run that started us
    finally:
        sigfile.unlink(missing_ok=True)
    t0 = time.perf_counter()
    compile_file(path, sig, saved=saved)
    print(f"compiled {path.name} in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a process by start()
    raise SystemExit(main(sys.argv[1:]))
