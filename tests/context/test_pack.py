"""Packing validated snippets within a token budget: real validator results from real git
repositories, counted with the real offline BPE tokenizer (cl100k_base)."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.context.enclosing import enclosing
from codevouch.context.pack import LEFT_OUT_REASONS, pack
from codevouch.context.windows import count_tokens, token_counter
from codevouch.errors import BudgetTooSmall
from codevouch.syntax.signature import signature_span
from codevouch.validator import validate
from tests.validator_helpers import Repo, find_line, snippet

LONG = "\n".join(["import functools", "", "",
                  "class OrderService:", "    @functools.cache",
                  "    def cancel_order(self, order_id,", "                     reason=None):",
                  *[f"        step_{i} = self.db.cancel(order_id, {i})  # bookkeeping {i}" for i in range(60)],
                  "        return order_id", "", "",
                  "def helper(x):", "    return x * 2", ""])
PATH = "src/orders.py"


@pytest.fixture()
def repo(tmp_path: Path) -> Repo:
    r = Repo.create(tmp_path / "repo")
    r.write(PATH, LONG)
    r.write("src/orders_pb2.py", "x = 1\n")
    r.commit("initial")
    return r


def window(repo: Repo, start: int, end: int, symbol: str = "OrderService.cancel_order") -> dict:
    return snippet(repo, PATH, start, end, symbol=symbol)


def test_signature_span_of_windows_cut_out_of_functions() -> None:
    # Python: decorators and a signature over two lines; the body starts below.
    assert signature_span(LONG, PATH, "OrderService.cancel_order", 30) == (5, 7)
    assert signature_span(LONG, PATH, "OrderService.cancel_order", 5) is None   # starts at the definition
    assert signature_span(LONG, PATH, "helper", 30) is None                     # not around that line
    go = "package x\n\n// Cancel cancels.\nfunc (s *Svc) Cancel(id int) int {\n\ta := id\n\treturn a\n}\n"
    assert signature_span(go, "a.go", "Svc.Cancel", 6) == (3, 4)
    js = "function f(a,\n  b) {\n  const c = a;\n  return c;\n}\n"
    assert signature_span(js, "a.js", "f", 4) == (1, 2)
    assert signature_span("whatever", "a.unknown", "f", 3) is None


def test_window_gets_its_signature_restored_and_marked(repo: Repo) -> None:
    start = find_line(LONG, "step_40 ")
    results = validate(repo.root, [window(repo, start, start + 9)])
    sigs = enclosing(repo.root, results)
    assert sigs[1].signature.text == ("    @functools.cache\n    def cancel_order(self, order_id,\n"
                                      "                     reason=None):")
    out = pack(results, count_tokens, 4000, enclosing=sigs)
    restored, _, snippet_part = out.markdown.partition("restored: src/orders.py#L5-L7")[2].partition("```\n\n```")
    assert "signature and decorators of OrderService.cancel_order" in restored
    assert f"lines 8-{start - 1} not shown" in restored
    assert "@functools.cache" in restored and "step_40 " in snippet_part and "@functools" not in snippet_part
    assert out.included[0].signature_restored and "1 with a restored signature" in out.markdown


def test_current_first_history_only_when_asked_excluded_never(repo: Repo) -> None:
    old_helper = snippet(repo, PATH, find_line(LONG, "def helper"), find_line(LONG, "return x * 2"), symbol="helper")
    repo.write(PATH, LONG.replace("x * 2", "x * 3"))
    results = validate(repo.root, [old_helper, {"path": "src/orders_pb2.py", "text": "x = 1"},
                                   window(repo, 8, 12)])
    assert [r.verdict for r in results] == ["historical-only", "excluded", "stale-but-ok"]
    plain = pack(results, count_tokens, 4000)
    current, _, report = plain.markdown.partition("## Pack report")
    # The historical hit's current code is offered as current code; its old text is not.
    assert "x * 3" in current and "x * 2" not in plain.markdown and "## Historical" not in current
    assert {(e.where.split(" ")[0], e.left_out) for e in plain.left_out} == {
        (f"src/orders.py#L{old_helper['start_line']}-L{old_helper['end_line']}", "historical"),
        ("src/orders_pb2.py", "excluded")}
    assert "- excluded: src/orders_pb2.py [excluded: generated]" in report
    # Rank order: the re-read helper (rank 1) comes before the window (rank 3).
    assert current.index("x * 3") < current.index("step_0 ")
    asked = pack(results, count_tokens, 4000, include_history=True)
    head, _, history = asked.markdown.partition("## Historical")
    assert "x * 2" in history.partition("## Pack report")[0] and "x * 2" not in head
    assert "do not implement" in history
    assert [e.left_out for e in asked.left_out] == ["excluded"]


def test_slices_of_one_symbol_keep_the_most_complete(repo: Repo) -> None:
    whole = window(repo, 5, find_line(LONG, "return order_id"))
    parts = [window(repo, 20, 25), whole, window(repo, 30, 32)]
    results = validate(repo.root, parts)
    out = pack(results, count_tokens, 8000, enclosing=enclosing(repo.root, results))
    assert [e.where for e in out.included] == [f"src/orders.py#L5-L{whole['end_line']} (OrderService.cancel_order)"]
    assert [(e.rank, e.left_out) for e in out.left_out] == [(1, "duplicate"), (3, "duplicate")]
    assert "the pack holds src/orders.py#L5-" in out.left_out[0].note
    # When the whole function does not fit, the most complete slice that fits goes in instead.
    whole_cost = count_tokens(out.markdown)
    small = pack(results, count_tokens, whole_cost - 200, enclosing=enclosing(repo.root, results))
    # ... and another slice it does not cover is not a duplicate: it goes in too, if it fits.
    assert [e.rank for e in small.included] == [1, 3]
    assert [(e.rank, e.left_out) for e in small.left_out] == [(2, "budget")]
    assert small.left_out[0].note.startswith("a smaller slice is in the pack: src/orders.py#L20-L25")


def test_disjoint_slices_of_a_function_become_its_whole_current_definition(repo: Repo) -> None:
    end = find_line(LONG, "return order_id")
    results = validate(repo.root, [window(repo, 20, 35), window(repo, 40, 55)])
    out = pack(results, count_tokens, 8000, enclosing=enclosing(repo.root, results))
    [whole] = out.included
    assert whole.where == f"src/orders.py#L5-L{end} (OrderService.cancel_order)" and whole.rank == 1
    assert whole.note == "the whole definition, joining the slices ranked 1, 2"
    assert [(e.rank, e.left_out) for e in out.left_out] == [(1, "duplicate"), (2, "duplicate")]
    assert "check: current code, the whole definition re-read from the working tree (joins 2" in out.markdown
    assert "@functools.cache" in out.markdown and "step_59 " in out.markdown
    # Too big for the budget: the slices themselves go in, with their signatures restored.
    tight = pack(results, count_tokens, 1500, enclosing=enclosing(repo.root, results))
    assert [e.rank for e in tight.included] == [1, 2] and all(e.signature_restored for e in tight.included)
    assert tight.left_out == ()
    # A definition far larger than what was retrieved is not offered in their place.
    few = validate(repo.root, [window(repo, 20, 22), window(repo, 40, 42)])
    assert [e.rank for e in pack(few, count_tokens, 8000, enclosing=enclosing(repo.root, few)).included] == [1, 2]


@pytest.mark.parametrize("budget", [700, 1000, 1500, 2500, 4000])
def test_never_exceeds_the_budget_with_the_real_tokenizer(repo: Repo, budget: int) -> None:
    files = {f"src/m{n}.py": "".join(f"def f{n}_{i}(order):\n" + "".join(
        f"    v{j} = order.total * {j}  # cancel the order, step {j}\n" for j in range(12)) + "    return v0\n\n\n"
        for i in range(6)) for n in range(5)}
    repo.commit_files(files)
    items = [snippet(repo, path, 1 + 16 * i, 14 + 16 * i, symbol=f"f{path[5]}_{i}")
             for path in files for i in range(6)]
    results = validate(repo.root, items)
    count = token_counter("claude-sonnet-4-5")      # cl100k x 1.35
    out = pack(results, count, budget)
    assert out.tokens == count(out.markdown) <= budget
    assert 0 < len(out.included) < len(items)        # everything would not fit
    assert len(out.included) + len(out.left_out) == len(items)
    assert {e.left_out for e in out.left_out} == {"budget"}
    # In rank order: what went in are the best-ranked snippets.
    assert [e.rank for e in out.included] == list(range(1, len(out.included) + 1))
    report = out.markdown.partition("## Pack report")[2]
    assert f"left out: {len(out.left_out)} (budget {len(out.left_out)})" in report
    # Citations of what was left out, as many as leave room for code (the rest by count).
    named = [e for e in out.left_out if f"- budget: {e.where} [" in report]
    assert [e.rank for e in named] == [e.rank for e in out.left_out[:len(named)]]
    if len(named) < len(out.left_out):
        assert f"- ... and {len(out.left_out) - len(named)} more" in report
    # ... and they take at most a tenth of the budget.
    assert count("\n".join(f"- budget: {e.where} [usable: same-commit]" for e in named)) <= budget / 10
    assert len(named) == {700: 0, 1000: 0, 1500: 0, 2500: 5, 4000: 10}[budget]
    manifest = out.manifest()
    assert manifest["left_out"]["by_reason"] == {"budget": len(out.left_out)}
    assert manifest["included"]["tokens"] == sum(e.tokens for e in out.included)


def test_a_budget_too_small_for_any_pack_says_so(repo: Repo) -> None:
    results = validate(repo.root, [window(repo, 8, 12)])
    for budget in (20, 0, -3):
        with pytest.raises(BudgetTooSmall, match=f"a budget of {budget} tokens cannot hold even an empty context pack"):
            pack(results, count_tokens, budget)
    tight = pack(results, count_tokens, count_tokens(pack(results, count_tokens, 5000).markdown) - 5)
    assert tight.included == () and tight.tokens <= tight.budget
    assert set(LEFT_OUT_REASONS) == {"budget", "duplicate", "historical", "excluded"}


def test_the_report_counts_what_went_in_and_apart_what_was_left_out(repo: Repo) -> None:
    """Issue 21.4: the footer counted every retrieved hit ("usable 9, stale-but-ok 1") whatever
    the budget let in. It now counts the included items, and the left-out ones separately."""
    repo.write("src/more.py", "".join(f"def f{n}(x):\n    return x + {n}  # {'pad ' * 40}\n\n\n" for n in range(8)))
    repo.commit("more")
    hits = [snippet(repo, "src/more.py", 1 + 4 * n, 2 + 4 * n, symbol=f"f{n}") for n in range(8)]
    hits.append({"path": "src/orders_pb2.py", "text": "x = 1"})
    results = validate(repo.root, hits)
    assert [r.verdict for r in results] == ["usable"] * 8 + ["excluded"]
    small = pack(results, count_tokens, 700)
    went_in, left = len(small.included), [e for e in small.left_out if e.left_out == "budget"]
    assert 0 < went_in < 8 and len(left) == 8 - went_in
    footer = small.markdown.rstrip().splitlines()[-1]
    assert footer == (f"verdicts: included: usable {went_in}, stale-but-ok 0, historical-only 0; "
                      f"left out: usable {8 - went_in}, stale-but-ok 0, historical-only 0, excluded 1")
    assert small.manifest()["verdicts"] == footer and small.tokens <= 700
    whole = pack(results, count_tokens, 10_000).markdown.rstrip().splitlines()[-1]
    assert whole == ("verdicts: included: usable 8, stale-but-ok 0, historical-only 0; "
                     "left out: usable 0, stale-but-ok 0, historical-only 0, excluded 1")
