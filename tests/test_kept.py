"""Answers kept under a look (codevouch/kept.py): given again only to the same look, never kept
under a racy or missing one, bounded, and emptied by clear_caches()."""
from __future__ import annotations

from codevouch import clear_caches
from codevouch.kept import Kept, Seen


def test_an_answer_is_given_again_only_to_the_look_it_was_kept_under() -> None:
    kept: Kept[str, int] = Kept("tests.kept.same_look")
    seen = Seen(((1, 2, 3),), False)
    kept.put("a", seen, 7)
    assert kept.get("a", Seen(((1, 2, 3),), False)) == 7
    assert kept.get("a", Seen(((1, 2, 4),), False)) is None      # the file changed
    assert kept.get("a", None) is None and kept.get("b", seen) is None
    kept.drop("a")
    assert kept.get("a", seen) is None


def test_nothing_is_kept_under_a_racy_or_missing_look() -> None:
    kept: Kept[str, int] = Kept("tests.kept.racy")
    racy = Seen(((1,),), True)
    kept.put("a", racy, 1)
    kept.put("b", None, 2)
    assert kept.get("a", Seen(((1,),), False)) is None and kept.get("b", Seen(((1,),), False)) is None


def test_the_oldest_goes_first_and_clearing_empties_it() -> None:
    kept: Kept[int, int] = Kept("tests.kept.bounded", most=2)
    seen = Seen((), False)
    for n in range(3):
        kept.put(n, seen, n)
    assert [kept.get(n, seen) for n in range(3)] == [None, 1, 2]
    clear_caches()
    assert kept.get(2, seen) is None
