"""Which builds the CLI hands to a running engine."""
from __future__ import annotations

import pytest

from codevouch.engine.handoff import HOOK_BUILD, INDEX_BUILD, build_of


@pytest.mark.parametrize(("argv", "expected"), [
    (["index", "build"], INDEX_BUILD),
    (["index", "build", "--repo", "x", "--json", "--wait", "5"], INDEX_BUILD),
    (["index", "build", "--repo=x", "-b", "main"], INDEX_BUILD),
    (["hooks", "run", "post-commit", "--for", "/g", "--branch=main", "--", "a", "b"], HOOK_BUILD),
    (["index", "build", "--repo", "a", "--repo", "b"], None),      # several repositories: one process's batch
    (["index", "build", "--repos", "night.toml"], None),
    (["index", "build", "--shard", "1/2"], None),                  # the batch path: the caller's own process
    (["index", "build", "--repo=x", "--shard=1/2"], None),
    (["index", "build", "--repair"], None),                        # moves the store the engine reads aside
    (["index", "build", "--help"], None),
    (["hooks", "run", "--help"], None),
    (["hooks", "install"], None),
    (["index", "status"], None),
    (["search", "build"], None),
    (["index"], None),
    ([], None),
])
def test_which_builds_go_to_the_engine(argv: list[str], expected: str | None) -> None:
    assert build_of(argv) == expected
