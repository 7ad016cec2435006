"""worktree/globs.py: gitignore-style lists matched in linear time, with .gitignore's meaning."""
from __future__ import annotations

import time

import pytest

from codevouch.worktree.globs import matcher
from codevouch.worktree.rules import path_filter


def test_gitignore_meaning_negation_directories_and_double_stars() -> None:
    match = matcher(["*.py", "!keep.py", "build/", "**/gen/*.js"])
    assert [match(p) for p in ["a/b.py", "keep.py", "build/x", "x/gen/y.js", "x/gen/z/y.js", "b.txt"]] == [
        True, False, True, True, False, False]


def test_a_path_git_gave_with_bytes_that_are_not_utf8_is_matched() -> None:
    # surrogateescape: a byte that is not UTF-8 is one character, as `?` sees it
    assert matcher(["*.py"])("x/\udcff.py") and matcher(["x/?.py"])("x/\udcff.py")
    assert not matcher(["*.txt"])("x/\udcff.py")


@pytest.mark.parametrize("stars", [8, 16])
def test_a_pattern_of_many_stars_takes_no_time(stars: int) -> None:
    """On Python's re this took 1.6 s (8 stars, 40 bytes) and minutes (12 stars); a repository's
    config, its .gitignore or an agent's --path could hang a search with it."""
    pattern = "*a" * stars + "*b"
    started = time.monotonic()
    assert not matcher([pattern])("a" * 255)
    assert not path_filter([pattern])("a" * 40)
    assert time.monotonic() - started < 1.0
