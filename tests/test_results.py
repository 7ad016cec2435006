"""What one search learned, handed to its validation and usage record (codevouch/results.py)."""
from __future__ import annotations

from pathlib import Path

from codevouch.results import Learned
from codevouch.retriever.overlay import Overlay
from codevouch.retriever.search import Results
from codevouch.validator.gather import Known
from codevouch.worktree.files import CallSettings
from codevouch.worktree.gitio import HeadState, WorktreeStatus


def test_a_search_without_its_head_gives_the_validator_nothing() -> None:
    call = CallSettings()
    learned = Learned.of(Results([]), call)
    assert learned == Learned(None, None, None, call)


def test_the_validator_gets_the_top_head_and_the_overlays_status() -> None:
    head = HeadState(Path("/r"), "c0ffee", "main")
    status = WorktreeStatus(frozenset({"a.py"}), frozenset())
    call = CallSettings()
    ov = Overlay("main", "base", "c0ffee", 0, status=status, hashes={"a.py": "b10b"})
    assert Learned.of(Results([], ov, head=head), call).facts == Known(Path("/r"), "c0ffee", status, {"a.py": "b10b"},
                                                                       rules_of=call.rules)
    # no overlay: no status (the validator runs its own) and no hashes
    assert Learned.of(Results([], None, head=head), call) == Learned(
        head, None, Known(Path("/r"), "c0ffee", None, {}, rules_of=call.rules), call)
