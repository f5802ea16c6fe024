"""Every ```bash and ```python block of README.md and of every docs/**/*.md page runs, as written,
from a copy of the repository.

Convention (README.md and the pages of the documentation site under ``docs/``):

* each block runs on its own, with the working directory = a fresh temporary copy of the
  repository (``src/``, ``tests/data``, ``docs``, ``scripts``, ``benchmarks``,
  ``pyproject.toml``, ``README.md``; not ``.venv``), and with the directory of this test's
  interpreter first on ``PATH``, so ``marinesim`` and ``python`` are the ones under test;
  Python blocks run in a fresh interpreter;
* an HTML comment on the line right before the opening fence qualifies the block:
  ``<!-- readme-test: needs-shared -->`` (skipped when ``../shared`` is absent; the copy sees
  it as ``../shared`` too), ``<!-- readme-test: needs-env VAR -->`` (skipped unless ``VAR`` is
  set), ``<!-- readme-test: needs-module NAME -->`` (skipped unless the optional package
  ``NAME`` imports, e.g. ``stable_baselines3`` of the ``rl`` extra),
  ``<!-- readme-test: skip REASON -->`` (never run), and ``timeout N`` (seconds, default
  60); several directives may share one comment, separated by ``;``.

One test per block, named ``PATH:LINE-LANG`` after the file and line of its opening fence, so a
failure points at the line to fix.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SHARED = ROOT.parent / "shared"
COPIED = (
    "src",
    "tests/data",
    "docs",
    "scripts",
    "benchmarks",
    "pyproject.toml",
    "README.md",
    "mkdocs.yml",
    "LICENSE",
    "CHANGELOG.md",
)
DEFAULT_TIMEOUT = 60.0

_FENCE = re.compile(r"^```(\w+)?\s*$")
_MARK = re.compile(r"^\s*<!--\s*readme-test:\s*(.*?)\s*-->\s*$")


@dataclass
class Block:
    """One runnable block of a Markdown page."""

    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    needs_shared: bool = False
    needs_env: list[str] = field(default_factory=list)
    needs_module: list[str] = field(default_factory=list)
    skip: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    path: str = "README.md"  # the page, relative to the repository root

    @property
    def where(self) -> str:
        """``PATH:LINE`` of the opening fence."""
        return f"{self.path}:{self.line}"


def parse_directives(text: str, block: Block) -> None:
    """Apply the directives of one ``readme-test:`` comment to ``block``.

    Raises
    ------
    ValueError
        An unknown directive or a malformed one (a typo must not silently run or skip).
    """
    parts = [p.strip() for p in text.split(";")]
    for n, part in enumerate(parts):
        if part.startswith("skip "):  # the reason is free text: everything after "skip"
            block.skip = "; ".join([part[5:].strip(), *parts[n + 1 :]]).strip("; ")
            break
        if not part:
            continue
        word, _, rest = part.partition(" ")
        rest = rest.strip()
        if word == "needs-shared" and not rest:
            block.needs_shared = True
        elif word == "needs-env" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", rest):
            block.needs_env.append(rest)
        elif word == "needs-module" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", rest):
            block.needs_module.append(rest)
        elif word == "skip" and rest:
            block.skip = rest
        elif word == "timeout" and re.fullmatch(r"\d+(\.\d+)?", rest):
            block.timeout = float(rest)
        else:
            raise ValueError(f"{block.where}: unknown readme-test directive {part!r}")


def extract_blocks(text: str, path: str = "README.md") -> list[Block]:
    """The ```bash and ```python blocks of a Markdown text with their directives.

    ``path`` (relative to the repository root) names the page in errors and test ids.
    """
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        lang = (m.group(1) or "").lower()
        if lang in ("bash", "python"):
            block = Block(i + 1, lang, "\n".join(lines[i + 1 : j]) + "\n", path=path)
            k = i - 1
            while k >= 0 and _MARK.match(lines[k]):  # comments stacked right above the fence
                parse_directives(_MARK.match(lines[k]).group(1), block)  # type: ignore[union-attr]
                k -= 1
            blocks.append(block)
        i = j + 1
    return blocks


def pages() -> list[Path]:
    """README.md and every Markdown page of the documentation site, in a stable order."""
    found = [README] if README.is_file() else []
    return found + sorted(DOCS.rglob("*.md"))


def all_blocks() -> list[Block]:
    """The runnable blocks of every page."""
    out: list[Block] = []
    for page in pages():
        rel = page.relative_to(ROOT).as_posix()
        out += extract_blocks(page.read_text(encoding="utf-8"), rel)
    return out


BLOCKS = all_blocks()
README_BLOCKS = [b for b in BLOCKS if b.path == "README.md"]


def _copy_repo(dst: Path) -> Path:
    repo = dst / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for rel in COPIED:
        src = ROOT / rel
        if src.is_dir():
            shutil.copytree(src, repo / rel, ignore=ignore)
        elif src.is_file():
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, repo / rel)
    if SHARED.is_dir():  # ../shared from the copy is the developers' data, as in the checkout
        (dst / "shared").symlink_to(SHARED, target_is_directory=True)
    return repo


def run_block(block: Block, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run one block in a fresh copy of the repository; return the finished process."""
    repo = _copy_repo(tmp_path)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["MPLBACKEND"] = "Agg"
    env.pop("PYTHONPATH", None)
    if block.lang == "python":
        script = repo / f"doc_block_{block.line}.py"
        script.write_text(block.code, encoding="utf-8")
        cmd = [sys.executable, str(script)]
    else:
        script = repo / f"doc_block_{block.line}.sh"
        script.write_text("set -e -o pipefail\n" + block.code, encoding="utf-8")
        cmd = ["bash", str(script)]
    return subprocess.run(
        cmd,
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=block.timeout,
        stdin=subprocess.DEVNULL,
    )


def test_readme_has_runnable_blocks() -> None:
    assert README.is_file(), "README.md missing"
    assert len(README_BLOCKS) >= 5
    assert README_BLOCKS[0].skip, "the install block at the top is marked skip"
    assert len(BLOCKS) >= 40, "the docs pages lost their runnable blocks"


def test_readme_starts_with_the_two_commands() -> None:
    """CI's .ci/run runs line 2 of the README's first code block as written."""
    first = README_BLOCKS[0].code.splitlines()
    assert first[0].endswith(".venv/bin/marinesim demo"), first
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert first[1] in ci.splitlines(), "README's test command differs from .ci/run's"


def test_user_pages_name_no_developer_data() -> None:
    """Only the developers' section may point at ../shared (a user's clone has no such folder)."""
    bad = [
        f"{page.relative_to(ROOT).as_posix()}:{n}"
        for page in pages()
        if "developers" not in page.relative_to(ROOT).parts
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if "../shared" in line or "needs-shared" in line
    ]
    assert not bad, f"../shared on user pages: {bad}"


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.where}-{b.lang}" for b in BLOCKS])
def test_readme_block(block: Block, tmp_path: Path) -> None:
    if block.skip:
        pytest.skip(f"{block.where}: {block.skip}")
    if block.needs_shared and not SHARED.is_dir():
        pytest.skip(f"{block.where}: ../shared not present")
    missing = [v for v in block.needs_env if not os.environ.get(v)]
    if missing:
        pytest.skip(f"{block.where}: needs {', '.join(missing)}")
    absent = [m for m in block.needs_module if importlib.util.find_spec(m) is None]
    if absent:
        pytest.skip(f"{block.where}: needs the package(s) {', '.join(absent)}")
    try:
        proc = run_block(block, tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: {block.lang} block ran past {block.timeout:g} s")
    assert proc.returncode == 0, (
        f"{block.where}: {block.lang} block exited {proc.returncode}\n"
        f"--- code ---\n{block.code}--- stdout ---\n{proc.stdout[-3000:]}"
        f"--- stderr ---\n{proc.stderr[-3000:]}"
    )


def test_directives_are_parsed() -> None:
    text = (
        "x\n<!-- readme-test: needs-shared; timeout 90 -->\n```bash\nls\n```\n"
        "<!-- readme-test: needs-env MARINESIM_MOOS_BIN -->\n```python\nprint(1)\n```\n"
        "<!-- readme-test: skip serves forever -->\n```bash\nserve\n```\n```text\nout\n```\n"
    )
    a, b, c = extract_blocks(text, "docs/x.md")
    assert a.where == "docs/x.md:3"
    (d,) = extract_blocks("<!-- readme-test: needs-module stable_baselines3 -->\n```bash\nx\n```\n")
    assert d.needs_module == ["stable_baselines3"]
    assert (a.line, a.lang, a.needs_shared, a.timeout, a.code) == (3, "bash", True, 90.0, "ls\n")
    assert (b.lang, b.needs_env, b.skip) == ("python", ["MARINESIM_MOOS_BIN"], None)
    assert c.skip == "serves forever" and not c.needs_shared
    with pytest.raises(ValueError, match="README.md:2: unknown readme-test directive"):
        extract_blocks("<!-- readme-test: need-shared -->\n```bash\nls\n```\n")
    with pytest.raises(ValueError, match="docs/guide/x.md:2: unknown readme-test directive"):
        extract_blocks("<!-- readme-test: timeout x -->\n```bash\nls\n```\n", "docs/guide/x.md")


def test_a_failing_block_fails_and_names_nothing_outside_the_copy(tmp_path: Path) -> None:
    """The harness itself: cwd is the copy (relative paths work), PATH finds our marinesim,
    a failing command in the middle of a bash block fails the block."""
    ok = Block(1, "bash", "test -f src/marinesim/__init__.py\ncommand -v marinesim\n")
    proc = run_block(ok, tmp_path / "a")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(Path(sys.executable).parent / "marinesim")
    bad = Block(2, "bash", "false\necho still here\n")
    proc = run_block(bad, tmp_path / "b")
    assert proc.returncode != 0 and "still here" not in proc.stdout
    assert not (tmp_path / "b" / "repo" / ".venv").exists()
