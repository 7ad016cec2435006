"""Packing validated snippets into a context pack that fits a token budget (pure).

In: validated snippets in rank order (plus, for windows cut out of a function, the
signature lines read from the working tree), a token counter and a budget. Out: the
markdown an agent gets and a report of what went in and what was left out, and why.

Rules, in order:
- excluded snippets never go in;
- current code first (usable, stale-but-ok, and the current version of a historical hit
  whose symbol still exists), in rank order;
- historical text only when asked, after all current code, and only while room remains;
- several slices of one symbol: the most complete one that fits; the others are duplicates;
- a window cut out of a function gets the function's signature and decorators above it,
  marked as restored;
- the whole markdown, report included, never counts more than the budget.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from codevouch.context.windows import TokenCounter
from codevouch.errors import BudgetTooSmall, InputError
from codevouch.printable import plural, visible
from codevouch.syntax.lines import MODULE_SYMBOL
from codevouch.validator.citation import clean, location, reread_header
from codevouch.validator.model import VERDICTS, Validated
from codevouch.validator.render import code_block
from codevouch.vocabulary import CURRENT_VERDICTS, Verdict

if TYPE_CHECKING:
    # For the type checker only (typing.Unpack is 3.11+): no runtime dependency on typing_extensions.
    from typing_extensions import Unpack

# Why something was left out of a pack.
LEFT_OUT_REASONS: dict[str, str] = {
    "budget": "did not fit in the remaining token budget",
    "duplicate": "another slice of the same code is in the pack",
    "historical": "historical text; included only when history is asked for",
    "excluded": "excluded by a rule (generated, vendored, backup, fixture, outside the repository)",
}
_REPORT_LINES = 20    # at most this many left-out items are named in the markdown; the manifest lists all
_REPORT_SHARE = 0.10  # and their lines take at most this share of the budget
_PREAMBLE = ("# Code context\n\nChecked by codevouch against the working tree. Use only the code under "
            "\"Current code\"; the rest is history. The report at the end says what was left out.")
_CURRENT_HEADING = "## Current code"
_HISTORY_HEADING = "## Historical (reference for ideas only; do not implement against this code)"


@dataclass(frozen=True)
class Lines:
    """Lines of a working-tree file (1-based, inclusive) and their text."""
    start_line: int
    end_line: int
    text: str


@dataclass(frozen=True)
class Enclosing:
    """The definition a snippet is only part of, read from the working tree: the whole of it,
    and its decorators and signature when the snippet starts below them."""
    definition: Lines
    signature: Lines | None = None


@dataclass(frozen=True)
class ReportNotes:
    """The lines a pack's report opens with, each the caller's to say: the packing decides none
    of them, and none changes what goes in, so they travel as one from pack to the report."""
    index: str | None = None      # branch@commit of the index's last build (None: never built)
    budget_note: str = ""         # where the budget came from
    live_note: str = ""           # how far the index is behind the working tree (the overlay's note)
    match_note: str = ""          # no hit is a good match (the pack still holds them, ranked, for the reader)


class NoteKeywords(TypedDict, total=False):
    """ReportNotes as pack's keywords: the form Index.pack calls it with."""
    index: str | None
    budget_note: str
    live_note: str
    match_note: str


@dataclass(frozen=True)
class Item:
    """One piece a pack may hold: current code or historical text, from one ranked snippet."""
    rank: int
    section: str                 # current | historical
    path: str
    start_line: int | None
    end_line: int | None
    symbol: str | None
    verdict: str
    reason: str
    block: str                   # the markdown for this piece
    signature: Lines | None = None       # restored above a window cut out of a definition
    enclosing: Lines | None = None       # the whole definition the piece is part of
    joins: tuple[int, ...] = ()          # a whole definition put together for these slices' ranks

    @property
    def lines(self) -> int:
        if self.start_line is None or self.end_line is None:
            return 0
        return self.end_line - self.start_line + 1

    @property
    def where(self) -> str:
        return location(self.path, self.start_line, self.end_line, self.symbol)

    def covers(self, other: Item) -> bool:
        """Same file and `other`'s lines lie within this item's lines."""
        return self.path == other.path and self.covers_lines(other.start_line, other.end_line)

    def covers_lines(self, start: int | None, end: int | None) -> bool:
        if self.start_line is None or self.end_line is None or start is None or end is None:
            return False
        return self.start_line <= start and end <= self.end_line


@dataclass(frozen=True)
class Entry:
    """A line of the pack's report: an item that went in, or one left out and why."""
    rank: int
    section: str
    where: str
    verdict: str
    reason: str
    tokens: int
    left_out: str | None = None   # budget | duplicate | historical | excluded
    note: str = ""
    signature_restored: bool = False

    def to_json(self) -> dict[str, Any]:
        out = {"rank": self.rank, "section": self.section, "citation": self.where, "verdict": self.verdict,
               "reason": self.reason, "tokens": self.tokens}
        if self.left_out:
            out["left_out"] = self.left_out
        if self.note:
            out["note"] = self.note
        if self.signature_restored:
            out["signature_restored"] = True
        return out


@dataclass(frozen=True)
class Pack:
    """The markdown for an agent and its report: `tokens` counts the whole markdown."""
    markdown: str
    tokens: int
    budget: int
    included: tuple[Entry, ...]
    left_out: tuple[Entry, ...]
    index: str | None          # "branch@commit" the snippets were retrieved from
    verdicts: str              # the report's verdict line: what went in, and what was left out

    def manifest(self) -> dict[str, Any]:
        reasons = Counter(e.left_out for e in self.left_out)
        return {"index": self.index, "budget": self.budget, "tokens": self.tokens,
                "included": {"count": len(self.included),
                             "tokens": sum(e.tokens for e in self.included),
                             "items": [e.to_json() for e in self.included]},
                "left_out": {"count": len(self.left_out), "by_reason": dict(reasons),
                             "items": [e.to_json() for e in self.left_out]},
                "verdicts": self.verdicts}


def items_of(results: Sequence[Validated], enclosing: dict[int, Enclosing] | None = None
             ) -> tuple[list[Item], list[Item], list[Entry]]:
    """Split ranked results into current items, historical items and excluded entries.

    enclosing: rank -> the definition a current-code snippet is only part of.
    """
    enclosing = enclosing or {}
    current: list[Item] = []
    history: list[Item] = []
    excluded: list[Entry] = []
    for rank, v in enumerate(results, 1):
        p = v.parsed
        if v.verdict == Verdict.EXCLUDED:
            excluded.append(Entry(rank, "excluded", location(p.path, p.start_line, p.end_line, p.symbol),
                                  v.verdict, v.reason, 0, "excluded", clean(v.detail)))
            continue
        if v.verdict in CURRENT_VERDICTS:
            c = v.current
            path, start, end, symbol = ((c.path, c.start_line, c.end_line, c.symbol or p.symbol) if c
                                        else (p.path, p.start_line, p.end_line, p.symbol))
            text = c.text if c else p.text
            around = enclosing.get(rank)
            sig = around.signature if around else None
            body = (code_block(path, text) if text is not None
                    else "(no text given; read the file at the cited lines)")
            if sig is not None:
                body = _restored(path, sig, symbol, start) + "\n\n" + body
            current.append(Item(rank, "current", path, start, end, symbol, v.verdict, v.reason,
                                v.citation + "\n\n" + body, sig, around.definition if around else None))
            continue
        if v.current is not None:    # historical, but the symbol lives on: its code now
            c = v.current
            head = reread_header(c, p.path)
            current.append(Item(rank, "current", c.path, c.start_line, c.end_line, c.symbol or p.symbol,
                                v.verdict, v.reason, head + "\n\n" + code_block(c.path, c.text)))
        old = code_block(p.path, p.text) if p.text is not None else "(no text given)"
        history.append(Item(rank, "historical", p.path, p.start_line, p.end_line, p.symbol, v.verdict,
                            v.reason, v.citation + "\n\n" + old))
    return current, history, excluded


def _restored(path: str, sig: Lines, symbol: str | None, start: int | None) -> str:
    gap = f"; lines {sig.end_line + 1}-{start - 1} not shown" if start and start > sig.end_line + 1 else ""
    what = f"signature and decorators of {clean(symbol)}" if symbol else "signature"
    return (f"restored: {location(path, sig.start_line, sig.end_line, None)} ({what}, re-read from the "
            f"working tree; the snippet is a window cut out of this definition{gap})\n\n"
            + code_block(path, sig.text))


def slots(items: Sequence[Item]) -> list[list[Item]]:
    """Items grouped by the code they show, in the order of each group's best rank; within a
    group, most complete first (most lines, then rank). A symbol is one group; module-level
    code groups by its exact lines. When several slices of one definition were retrieved, its
    whole current text joins the group as the most complete choice (unless it is more than
    _JOIN_LIMIT times their lines)."""
    groups: dict[tuple[Any, ...], list[Item]] = {}
    for item in items:
        key: tuple[Any, ...] = ((item.path, item.symbol) if item.symbol and item.symbol != MODULE_SYMBOL
                                else (item.path, item.start_line, item.end_line))
        groups.setdefault(key, []).append(item)
    out = []
    for group in groups.values():
        whole = _joined(group)
        out.append(sorted(group + ([whole] if whole else []), key=lambda i: (-i.lines, i.rank)))
    return out


_JOIN_LIMIT = 3


def _joined(group: list[Item]) -> Item | None:
    slices = [i for i in group if i.enclosing is not None]
    if len(slices) < 2:
        return None
    d = slices[0].enclosing
    assert d is not None
    if any(i.covers_lines(d.start_line, d.end_line) for i in group) or \
            d.end_line - d.start_line + 1 > _JOIN_LIMIT * sum(i.lines for i in slices):
        return None
    first = min(group, key=lambda i: i.rank)
    head = (f"source: {location(first.path, d.start_line, d.end_line, first.symbol)}\nversion: working tree\n"
            f"check: current code, the whole definition re-read from the working tree "
            f"(joins {len(slices)} retrieved slices of it)")
    return Item(first.rank, "current", first.path, d.start_line, d.end_line, first.symbol, first.verdict,
                first.reason, head + "\n\n" + code_block(first.path, d.text),
                joins=tuple(sorted(i.rank for i in slices)))


@dataclass
class _Packer:
    """The state of one packing: what is in, what is out, and each item's place and cost."""
    count: TokenCounter
    budget: int
    notes: ReportNotes
    chosen: list[Item]
    left: list[Entry]
    cost: dict[int, int]
    place: dict[int, tuple[int, int]]     # id(item) -> (section, rank of its group's best hit)
    listed: int = _REPORT_LINES            # left-out items the report names
    origin: dict[int, Item] = field(default_factory=dict)   # id(entry) -> the item it reports

    def entry(self, item: Item, why: str | None, note: str = "") -> Entry:
        made = Entry(item.rank, item.section, item.where, item.verdict, item.reason, self.cost[id(item)],
                     why, note or _joined_note(item), item.signature is not None)
        self.origin[id(made)] = item
        return made

    def render(self, chosen: Sequence[Item], left: Sequence[Entry], detail: int | None = None) -> str:
        """The whole markdown: preamble, current code, history, and the report."""
        ordered = sorted(chosen, key=lambda i: self.place[id(i)])
        current = [i.block for i in ordered if i.section == "current"]
        history = [i.block for i in ordered if i.section == "historical"]
        parts = [_PREAMBLE, _CURRENT_HEADING, *(current or ["(none)"])]
        if history:
            parts += [_HISTORY_HEADING, *history]
        parts.append(self.report(ordered, left, self.listed if detail is None else detail))
        # A model reading the pack is a terminal of sorts: control characters are shown as
        # escapes (before counting, so the budget holds for what is printed).
        return visible("\n\n".join(parts) + "\n")

    def report(self, chosen: Sequence[Item], left: Sequence[Entry], listed: int) -> str:
        """What went in (count, tokens), what was left out and why, and the index commit."""
        notes = self.notes
        lines = ["## Pack report", f"index: {clean(notes.index) if notes.index else 'unknown'}"]
        if notes.live_note:
            lines.append(f"live: {clean(notes.live_note)}")
        if notes.match_note:
            lines.append(f"match: {clean(notes.match_note)}")
        if notes.budget_note:
            lines.append(f"budget: {notes.budget_note}")
        restored = sum(1 for i in chosen if i.signature is not None)
        lines.append(f"included: {plural(len(chosen), 'snippet')}, {plural(sum(self.cost[id(i)] for i in chosen), 'token')}"
                     + (f", {restored} with a restored signature" if restored else ""))
        if not left:
            lines.append("left out: nothing")
        else:
            by = Counter(e.left_out for e in left)
            lines.append(f"left out: {len(left)} ("
                         + ", ".join(f"{why} {n}" for why, n in sorted(by.items())) + ")")
            ordered = sorted(left, key=lambda e: e.rank)
            lines += [_left_line(e) for e in ordered[:listed]]
            if len(ordered) > listed:
                lines.append(f"- ... and {len(ordered) - listed} more (the --json manifest lists all)")
        lines.append(verdict_line(chosen, left))
        return "\n".join(lines)

    def covered(self, item: Item) -> Item | None:
        return next((c for c in self.chosen if c.covers(item)), None)


def pack(results: Sequence[Validated], count: TokenCounter, budget: int, include_history: bool = False,
         enclosing: dict[int, Enclosing] | None = None, **notes: Unpack[NoteKeywords]) -> Pack:
    """The context pack for ranked `results` within `budget` tokens as counted by `count`.

    notes: the report's opening lines (ReportNotes' fields: index, budget_note, live_note, match_note).
    Raises InputError when the budget cannot hold even an empty pack with its report.
    """
    # The left-out citations may take at most _REPORT_SHARE of the budget, so a long list
    # never crowds out code: fewer are named when needed (the --json manifest lists all).
    report_notes = ReportNotes(**notes)
    for listed in (_REPORT_LINES, 10, 5, 0):
        try:
            out = _pack_once(results, count, budget, include_history, enclosing, report_notes, listed)
        except InputError:
            if listed:
                continue
            raise
        named = [_left_line(e) for e in out.left_out[:listed]]
        if not named or count("\n".join(named)) <= budget * _REPORT_SHARE:
            return out
    raise AssertionError("unreachable: the last level names nothing")


def _pack_once(results: Sequence[Validated], count: TokenCounter, budget: int, include_history: bool,
               enclosing: dict[int, Enclosing] | None, notes: ReportNotes, listed: int) -> Pack:
    current, history, excluded = items_of(results, enclosing)
    groups = slots(current)
    sep = count("\n\n")
    p = _Packer(count, budget, notes, [], list(excluded),
                cost={id(i): count(i.block) + sep for i in (*(x for g in groups for x in g), *history)},
                place={**{id(i): (0, min(x.rank for x in g)) for g in groups for i in g},
                       **{id(i): (1, i.rank) for i in history}}, listed=listed)
    if not include_history:
        p.left += [p.entry(i, "historical", "ask for history (--include-history) to add it") for i in history]
    wanted = [i for g in groups for i in g] + (history if include_history else [])
    # First pass on estimates: reserve the report as if every candidate were left out (its
    # longest form), then fill in rank order with the parts' counts.
    worst = count(p.render([], [*p.left, *(p.entry(i, "budget") for i in wanted)]))
    if include_history and history:
        worst += count(_HISTORY_HEADING) + sep
    room = budget - worst
    for g in groups:
        room = _place_group(p, g, room)
    if include_history:
        _place_history(p, history, room)
    return _fit(p)


def _place_group(p: _Packer, g: Sequence[Item], room: int) -> int:
    """One slot's pieces, most complete first: the most complete piece that fits goes in; then
    any other slice it does not cover, if it fits. Returns the room left."""
    placed = next((alt for alt in g if p.covered(alt) is None and p.cost[id(alt)] <= room), None)
    for n, alt in enumerate(g):
        cover = p.covered(alt)
        if alt.joins and alt is not placed:
            continue    # a whole definition put together here, not retrieved: its slices report
        if cover is not None:
            p.left.append(p.entry(alt, "duplicate", f"the pack holds {cover.where}"))
        elif p.cost[id(alt)] <= room and (placed is None or n >= g.index(placed)):
            p.chosen.append(alt)
            room -= p.cost[id(alt)]
        elif placed is not None and n < g.index(placed):     # more complete, but too big
            p.left.append(p.entry(alt, "budget", f"a smaller slice is in the pack: {placed.where}"))
        else:
            p.left.append(p.entry(alt, "budget"))
    return room


def _place_history(p: _Packer, history: Sequence[Item], room: int) -> None:
    """The historical items, in rank order, while they fit (the last placement: `_fit` then
    counts the real text, so the room left is not needed)."""
    for item in history:
        if p.cost[id(item)] <= room:
            p.chosen.append(item)
            room -= p.cost[id(item)]
        else:
            p.left.append(p.entry(item, "budget"))


def _fit(p: _Packer) -> Pack:
    """Count the whole text: drop the last item while it is over the budget, then try the items
    left out for budget again with the room the smaller report freed. The real count of the
    final markdown decides, never the sum of the parts."""
    while True:
        text = p.render(p.chosen, p.left)
        tokens = p.count(text)
        if tokens <= p.budget:
            break
        if p.chosen:
            last = max(p.chosen, key=lambda i: p.place[id(i)])
            p.chosen.remove(last)
            p.left.append(p.entry(last, "budget"))
        elif p.listed:
            p.listed = 0     # the report's citations alone are too long: counts only
        else:
            raise BudgetTooSmall(p.budget, tokens)
    text, tokens = _refill(p, text, tokens)
    included = tuple(p.entry(i, None) for i in sorted(p.chosen, key=lambda i: p.place[id(i)]))
    return Pack(text, tokens, p.budget, included, tuple(sorted(p.left, key=lambda e: e.rank)), p.notes.index,
                verdict_line(p.chosen, p.left))


def _refill(p: _Packer, text: str, tokens: int) -> tuple[str, int]:
    # A duplicate whose covering piece was dropped above is back in the running.
    for n, e in enumerate(p.left):
        item = p.origin.get(id(e))
        if e.left_out == "duplicate" and item is not None and p.covered(item) is None:
            p.left[n] = p.entry(item, "budget")
    for entry in sorted((e for e in p.left if e.left_out == "budget"), key=lambda e: e.rank):
        item = p.origin.get(id(entry))
        # Skip what would repeat code in the pack, and what cannot fit even counting the
        # report line it would free.
        if item is None or p.covered(item) is not None or any(item.covers(c) for c in p.chosen) or \
                p.cost[id(item)] - p.count(_left_line(entry)) > p.budget - tokens:
            continue
        left = [e for e in p.left if e is not entry]
        trial = p.render([*p.chosen, item], left)
        trial_tokens = p.count(trial)
        if trial_tokens <= p.budget:
            p.chosen.append(item)
            p.left = left
            text, tokens = trial, trial_tokens
    return text, tokens


def verdict_line(chosen: Sequence[Item], left: Sequence[Entry]) -> str:
    """The report's last line: the verdicts of what went in, and separately of what was left out
    (counting every retrieved hit there told an agent that code it never got was usable)."""
    went_in = Counter(i.verdict for i in chosen)
    out = Counter(e.verdict for e in left)
    return ("verdicts: included: " + ", ".join(f"{v} {went_in.get(v, 0)}" for v in VERDICTS if v != Verdict.EXCLUDED)
            + "; left out: " + ", ".join(f"{v} {out.get(v, 0)}" for v in VERDICTS))


def _joined_note(item: Item) -> str:
    if not item.joins:
        return ""
    return "the whole definition, joining the slices ranked " + ", ".join(map(str, item.joins))


def _left_line(e: Entry) -> str:
    return f"- {e.left_out}: {e.where} [{e.verdict}: {e.reason}]"
