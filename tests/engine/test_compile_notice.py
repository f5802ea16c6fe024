"""One compile message: the CLI's numba listener and the engine's notice of the generated tick."""

from __future__ import annotations

import io

from marinesim.cli.progress import _CompileListener
from marinesim.engine.compiled import notice


def test_listener_prints_the_engine_message_once() -> None:
    out = io.StringIO()
    lst = _CompileListener(out)
    for _ in range(2):
        lst.on_start(None)
        lst.on_start(None)  # nested compiles: one kernel
        lst.on_end(None)
        lst.on_end(None)
    lst.finish()
    lines = out.getvalue().splitlines()
    assert lines[0] == notice.MESSAGE
    assert len(lines) == 2 and lines[1].startswith("  compiled in ")


def test_listener_silent_while_the_engine_speaks(monkeypatch) -> None:  # noqa: ANN001
    out = io.StringIO()
    lst = _CompileListener(out)
    monkeypatch.setattr(notice, "_SPEAKING", [1])
    assert notice.speaking()
    lst.on_start(None)
    lst.on_end(None)
    lst.finish()
    assert out.getvalue() == ""
    notice._SPEAKING[0] = 0
    lst.on_start(None)
    lst.on_end(None)
    lst.finish()
    assert out.getvalue().startswith(notice.MESSAGE)
