"""Build progress off a terminal: plain lines on stderr once a build runs long (commands/progress.py)."""
from __future__ import annotations

import io
from pathlib import Path

from codevouch.commands.progress import ProgressLines
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo


def test_a_build_off_a_terminal_prints_progress_lines(tmp_path: Path) -> None:
    """Issue 21.3: a first build whose stderr is not a terminal (cron, CI) printed nothing until
    the end. With the interval at 0 (CODEVOUCH_PROGRESS_SECONDS) every 5% step prints a line."""
    repo = Repo(tmp_path / "repo")
    repo.commit_files({f"pkg/m{n:02}.py": f"def f{n}(x):\n    return x + {n}\n" for n in range(30)}, "thirty files")
    proc = cv("index", "build", *FAKE, "--json", cwd=repo.root, index=tmp_path / "index",
              env={"CODEVOUCH_PROGRESS_SECONDS": "0"})
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("codevouch: build: ")]
    chunking = [ln for ln in lines if "chunking" in ln and "files chunked" not in ln]
    embedding = [ln for ln in lines if "embedding" in ln]
    assert 15 <= len(chunking) <= 31 and chunking[-1].startswith("codevouch: build: chunking 30/30 files (100%)")
    assert embedding and embedding[-1].startswith("codevouch: build: 30 files chunked; embedding 30/30 chunks (100%)")
    assert "files/s" in chunking[0] and "left" in chunking[0] and "chunks/s" in embedding[-1]
    # A quick build under the default interval says nothing; the JSON on stdout is untouched.
    quiet = cv("index", "build", *FAKE, "--json", cwd=repo.root, index=tmp_path / "index2")
    assert quiet.returncode == 0 and "codevouch: build:" not in quiet.stderr
    assert '"branches"' in quiet.stdout


def test_progress_lines_every_ten_seconds_or_five_percent() -> None:
    """A 375 s build of 2,829 chunks (the issue's self-index): quiet for 10 s, then a line every
    ~10 s with files, chunks, embedded, rate and an estimate; never more than 5 lines per 10 s."""
    now = [0.0]
    out = io.StringIO()
    lines = ProgressLines(out, every=10, clock=lambda: now[0])
    for n in range(1, 351):
        now[0] += 0.05
        lines(n, 350, "chunking")
    for done in range(64, 2829 + 64, 64):
        now[0] += 3.3
        lines(min(done, 2829), 2829, "embedding")
    got = out.getvalue().splitlines()
    assert got[0] == "codevouch: build: chunking 200/350 files (57%), 20.0 files/s, about 8 s left"
    assert "codevouch: build: 350 files chunked; embedding 1344/2829 chunks (48%), 19.4 chunks/s, " \
           "about 1 min 17 s left" in got
    assert got[-1] == "codevouch: build: 350 files chunked; embedding 2829/2829 chunks (100%), 19.1 chunks/s"
    assert len(got) == 20
