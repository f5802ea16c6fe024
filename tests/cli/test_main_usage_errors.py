"""Usage errors of the command line: a message and exit 2, never a traceback."""

from __future__ import annotations

import pytest

from marinesim.cli.main import main


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["bench", "usm", "--vehicles", "abc"], "valid integer"),
        (["run"], "Missing"),
        (["nosuch"], "No such command"),
    ],
)
def test_usage_errors_exit_2_without_traceback(
    argv: list[str], text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert text in err
    assert "Traceback" not in err


def test_version_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out.startswith("marinesim ")
