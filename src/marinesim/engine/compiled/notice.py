"""The compile notice: a run that must compile its tick says so once, with progress.

numba compiles the generated tick at its first call when its disk cache does not hold it
(a new plugin set, an edited law, an empty cache): that takes seconds on a small machine.
:func:`compiling` wraps the call: when the cache misses it prints, to stderr,
``compiling the tick for this plugin set (first run only)…`` and then the seconds elapsed
(a line updated in place on a terminal, a dot every few seconds otherwise) and the total.
``MARINESIM_QUIET=1`` silences it.  ``marinesim bench warmup`` compiles ahead of time.
Processes compiling the same plugin set at once take turns
(:func:`~marinesim.engine.compiled.generate.compile_lock`): the first compiles, the others
load its machine code from the disk cache.

This is the one compile message: the CLI's listener of numba's compile events
(:class:`marinesim.cli.progress.compile_notice`, for the other numba kernels) prints the same
:data:`MESSAGE` and stays silent while :func:`compiling` speaks (:func:`speaking`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from marinesim.engine.compiled.generate import compile_lock, is_cached
from marinesim.engine.compiled.law import Laws

__all__ = ["MESSAGE", "compiled_apart", "compiling", "compiling_apart", "speaking"]

MESSAGE = "compiling the tick for this plugin set (first run only)…"
#: The notice of a tick compiling in another process (:mod:`.background`).
APART = (
    "compiling the tick for this plugin set in the background (first run only); "
    "the ticks go through the plugins meanwhile, with the same results…"
)

_SPEAKING = [0]


def speaking() -> bool:
    """Whether :func:`compiling` is announcing a compile now (other notices keep quiet)."""
    return _SPEAKING[0] > 0


@contextlib.contextmanager
def compiling(fn: Any, decls: Sequence[Laws], saved: bool = False) -> Iterator[None]:
    """Announce a compile (and its progress) while the body runs, if ``fn`` (the plugin set's
    ``tick_run``, or ``tick_loop`` when ``saved``) must compile."""
    if not hasattr(fn, "signatures") or fn.signatures or is_cached(decls, saved=saved):
        yield  # interpreted, compiled in this process already, or on disk: nothing to say
        return
    # one process compiles a plugin set at a time; one waiting for another's compile then
    # loads the machine code from the disk cache (its notice covers the wait)
    with _announce(), compile_lock(decls):
        yield


@contextlib.contextmanager
def _announce() -> Iterator[None]:
    """The compile message and its progress while the body runs."""
    if os.environ.get("MARINESIM_QUIET") == "1":
        yield
        return
    err = sys.stderr
    tty = err.isatty()
    err.write(MESSAGE + ("" if tty else "\n"))
    err.flush()
    t0 = time.perf_counter()
    done = threading.Event()

    def tick() -> None:
        while not done.wait(1.0 if tty else 5.0):
            s = time.perf_counter() - t0
            err.write(f"\r{MESSAGE} {s:.0f} s" if tty else f"  … {s:.0f} s\n")
            err.flush()

    th = threading.Thread(target=tick, daemon=True)
    th.start()
    _SPEAKING[0] += 1
    try:
        yield
    finally:
        _SPEAKING[0] -= 1
        done.set()
        th.join()
        s = time.perf_counter() - t0
        err.write((f"\r{MESSAGE} done in {s:.1f} s\n") if tty else f"  compiled in {s:.1f} s\n")
        err.flush()


def _say(text: str) -> None:
    if os.environ.get("MARINESIM_QUIET") == "1":
        return
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def compiling_apart() -> None:
    """Say that the tick compiles in another process (the run goes on through the plugins)."""
    _say(APART)


def compiled_apart(job: Any, ok: bool, t: float) -> None:
    """Say how the background compile ``job`` ended, at simulated time ``t`` [s]: its machine
    code is loaded from here on, or it failed (its log) and the run compiles the tick itself."""
    if ok:
        _say(f"  compiled in {job.seconds:.1f} s; the ticks from t = {t:g} s run compiled")
    else:
        _say(f"  the background compile failed (its output: {job.log}); compiling here")

