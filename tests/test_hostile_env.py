"""Bad environment, empty queries, a corrupt lexical stamp (issue 19, parts 4 and 5): each a clear
message or a working answer through the CLI (in-process), never a traceback."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests import clihelp
from tests.gitrepo import Repo

FAKE = ["--embedder", "fake-bow-64"]


def cv(repo: Repo, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # The variables reach the command as the call's environment (as the engine passes a caller's).
    return clihelp.cv(*args, cwd=repo.root, env=env)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("env")
    repo = Repo(base / "repo")
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    index = base / "index"
    out = cv(repo, "index", "build", "--index", str(index), *FAKE)
    assert out.returncode == 0, out.stderr
    return repo, index


@pytest.mark.parametrize("query", ["\u200b", "\x01", "\u200b\u200b \t", "(( ))", "\u00a0"])
def test_a_query_with_no_letters_or_digits_is_empty(built: tuple[Repo, Path], query: str) -> None:
    repo, index = built
    out = cv(repo, "search", query, "--index", str(index))
    assert out.returncode == 2 and "query is empty" in out.stderr and "Traceback" not in out.stderr, out


@pytest.mark.parametrize("var, value, argv", [
    ("CODEVOUCH_BUSY_TIMEOUT", "abc", ["search", "cancel"]),
    ("CODEVOUCH_BUSY_TIMEOUT", "-5", ["search", "cancel"]),
    ("CODEVOUCH_BUSY_TIMEOUT", "nan", ["search", "cancel"]),
    ("CODEVOUCH_PROGRESS_SECONDS", "soon", ["index", "build", *FAKE]),
    ("CODEVOUCH_MAX_INPUT_BYTES", "99999999999999999999999", ["validate", "-"]),
    ("CODEVOUCH_BUSY_TIMEOUT", "1e300", ["search", "cancel"]),
    ("CODEVOUCH_BUDGET", "99999999999999999999999", ["context", "cancel"]),
    ("CODEVOUCH_RESERVE", "1e999", ["context", "cancel"]),
    ("CODEVOUCH_MATCH_THRESHOLD", "99999999999999999999999", ["search", "cancel"]),
    ("CODEVOUCH_OVERLAY_LIMIT", "-1", ["search", "cancel"]),
])
def test_a_bad_environment_variable_is_named(built: tuple[Repo, Path], var: str, value: str, argv: list[str]) -> None:
    # Exit 2 (a usage error), no longer 1: a variable out of its range is the caller's input,
    # as a bad argument is (every numeric variable has a range now).
    repo, index = built
    out = cv(repo, *argv, "--index", str(index), **{var: value})
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert var in out.stderr and "Traceback" not in out.stderr and "unexpected error" not in out.stderr, out.stderr


def test_a_relative_xdg_data_home_is_ignored(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def a():\n    return 1\n"})
    home = tmp_path / "home"
    out = clihelp.cv("index", "build", *FAKE, cwd=repo.root,
                     env={"CODEVOUCH_INDEX": None, "HOME": str(home), "XDG_DATA_HOME": "rel/dir"})
    assert out.returncode == 0, out.stderr
    assert not (repo.root / "rel").exists(), "the index went inside the repository"
    assert (home / ".local" / "share" / "codevouch").is_dir()


def test_a_corrupt_lexical_stamp_is_rebuilt_or_bypassed(built: tuple[Repo, Path]) -> None:
    repo, index = built
    stamps = list((index / "lexical").glob("*/*/codevouch-stamp"))
    assert stamps, "no lexical copy to corrupt"
    for stamp in stamps:
        stamp.write_bytes(os.urandom(300) + b"\xff\xfe")
    out = cv(repo, "search", "cancel_order", "--mode", "lexical", "--index", str(index))
    assert out.returncode == 0 and "cancel_order" in out.stdout, out.stderr
    again = cv(repo, "index", "build", "--index", str(index), *FAKE)
    assert again.returncode == 0, again.stderr
    out = cv(repo, "search", "cancel_order", "--mode", "lexical", "--index", str(index))
    assert out.returncode == 0 and "cancel_order" in out.stdout, out.stderr


def test_a_build_stamped_in_the_future_is_not_negative_seconds_old() -> None:
    from datetime import datetime, timezone

    from codevouch.health.status import ages as _ages
    now = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    assert _ages("2026-12-01T11:00:00Z", now) == {"age_seconds": 3600}
    ahead = _ages("2099-01-01T00:00:00Z", now)
    assert ahead["age_seconds"] == 0 and ahead["clock_ahead_seconds"] > 2_000_000_000 and "ahead" in ahead["note"]
    assert _ages(None, now) == {"age_seconds": None}
