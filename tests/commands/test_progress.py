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
    assert got[-1] == "codevouch: build: 350 files chunked; embedding 2829/2829 chunks (100%), 19.0 chunks/s"
    assert len(got) == 20


def test_the_estimate_leaves_out_the_time_before_the_first_batch() -> None:
    """Loading the model before the first batch took seconds the rest of the build does not pay:
    the rate is counted from the phase's first report, so the first estimate is not the worst."""
    now = [0.0]
    out = io.StringIO()
    lines = ProgressLines(out, every=10, clock=lambda: now[0])
    now[0] = 30.0                       # 30 s of model loading, then 16 chunks a second
    lines(16, 1616, "embedding")
    for done in range(32, 1617, 16):
        now[0] += 1.0
        lines(done, 1616, "embedding")
    got = out.getvalue().splitlines()
    assert got[0] == "codevouch: build: embedding 16/1616 chunks (1%)"      # how far, not yet how fast
    assert got[1] == "codevouch: build: embedding 112/1616 chunks (7%), 16.0 chunks/s, about 1 min 34 s left"
    assert all("16.0 chunks/s" in line for line in got[1:])


def test_a_build_reports_every_sixteen_texts_with_batches_long_and_short_in_turn(tmp_path: Path) -> None:
    """A build's embedding reports come every PROGRESS_BATCH texts (a 64-text batch took 25 s on a
    loaded machine), and batches of short and long texts alternate so the rate stays level."""
    from codevouch.indexer.build import PROGRESS_BATCH, interleaved

    repo = Repo(tmp_path / "repo")
    repo.commit_files({f"m{n:02}.py": f"def f{n}(x):\n" + "    x += 1\n" * n + "    return x\n" for n in range(40)},
                      "forty files of growing length")
    reports: list[tuple[int, int, str]] = []
    from codevouch import Index
    from codevouch.embedding import FakeEmbedder

    Index(repo.root, tmp_path / "index", embedder=FakeEmbedder()).build(
        progress=lambda done, total, what: reports.append((done, total, what)))
    embedded = [done for done, _, what in reports if what == "embedding"]
    assert embedded and embedded[-1] == reports[-1][1]
    assert all(b - a <= PROGRESS_BATCH for a, b in zip([0] + embedded, embedded))
    assert [b[0] for b in interleaved([[(str(n), "")] for n in range(5)])] == [("0", ""), ("4", ""), ("1", ""),
                                                                                ("3", ""), ("2", "")]
