"""codevouch.syntax.signature: the lines that go back above a window cut from a body."""
from __future__ import annotations

from codevouch.syntax.signature import enclosing, finder, signature_span

PY = ("class Shop:\n"              # 1
      "    # cancels\n"            # 2
      "    @retry\n"               # 3
      "    def cancel(self,\n"     # 4
      "               order):\n"   # 5
      "        a = 1\n"            # 6
      "        b = 2\n"            # 7
      "        return a + b\n")    # 8


def test_a_window_from_the_body_gets_comments_decorators_and_the_whole_signature() -> None:
    assert signature_span(PY, "shop.py", "Shop.cancel", 7) == (2, 5)
    assert enclosing(PY, "shop.py", "Shop.cancel", 7) == ((2, 8), (2, 5))


def test_a_snippet_that_starts_at_the_definition_needs_nothing_restored() -> None:
    assert signature_span(PY, "shop.py", "Shop.cancel", 2) is None


def test_a_brace_language_whose_body_opens_on_the_signature_line() -> None:
    go = "package m\n\n// Start runs.\nfunc Start(a int,\n\tb int) {\n\tx := a\n\t_ = x\n}\n"
    assert signature_span(go, "m.go", "Start", 6) == (3, 5)


def test_unknown_symbol_language_or_unparsable_text_gives_none() -> None:
    assert signature_span(PY, "shop.py", "Shop.refund", 7) is None
    assert signature_span(PY, "shop.txt", "Shop.cancel", 7) is None
    assert finder("", "a.py") is None
    find = finder(PY, "shop.py")
    assert find is not None and find("Shop.cancel", 8) == ((2, 8), (2, 5))
