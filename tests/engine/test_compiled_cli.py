"""The CLI on compiled runs: one compile message; the run progress moves on compiled calls."""

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


class _CompiledSim:
    """A run whose compiled calls report progress a few times, each after many ticks."""

    name = "fake"
    t = 0.0

    class clock:  # noqa: N801 - the attributes _run_with_bar reads
        start = 0.0
        end = 100.0

    def run(self, progress) -> str:  # noqa: ANN001
        import time

        for t in (30.0, 60.0, 90.0):  # three compiled calls
            time.sleep(0.12)
            self.t = t
            progress(t, 100.0)
        self.t = 100.0
        return "result"


def test_run_progress_moves_on_compiled_calls(capsys) -> None:  # noqa: ANN001
    from marinesim.cli.run import _run_with_bar

    assert _run_with_bar(_CompiledSim()) == "result"
    err = capsys.readouterr().err
    for pct in ("30%", "60%", "90%"):  # before the end, not only the final 100 %
        assert pct in err, err
