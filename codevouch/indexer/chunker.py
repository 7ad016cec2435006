"""Syntax-aware splitting of source text into retrieval chunks.

Pure logic: no file or git I/O.  A file is parsed once with tree-sitter and
cut along definition boundaries so that every chunk fits a token budget.

Model
-----
* Lines are numbered by ``"\\n"`` only (:func:`split_lines`), 1-based in the
  public API.  Every chunk's ``text`` is exactly the joined lines of its range.
* An *item* is a top-level (or container-member) syntax node together with the
  comments/attributes/decorators directly above it (no blank line between).
  Items that define symbols (see each language's ``spec.LanguageSpec``) carry qualified names
  (:mod:`codevouch.syntax.tree`, shared with ``find_definitions``).
* A definition that fits ``budget`` tokens is one piece.  One that does not fit
  is split: a container (class, impl, interface, namespace ...) becomes its
  *header* piece (everything before its first member definition, symbol = the
  container name), its members (recursively, with qualified names), the code
  between members and its tail (symbol = the container name); a leaf becomes
  consecutive line windows that each carry its symbol.
* Code that is not a definition becomes ``<module>`` pieces at top level.
* Adjacent small pieces of the same level are merged while the merged text
  stays within the *merge target* (``budget // 2`` by default): small enough
  that merged chunks stay focused, large enough to avoid crumbs.  Pieces of a
  split definition never merge with anything outside that definition; its
  header and its line windows never merge at all.  A piece without any
  alphanumeric character (a lone ``}``) is attached to the chunk before it
  whenever that stays within the budget, keeping that chunk's symbol.

Guarantees: chunks are ordered, never overlap, never start or end on a blank
line, and together cover every non-blank line.  ``count_tokens(chunk.text) <=
budget`` holds for every chunk except a window made of one single line that is
itself over budget (minified code; callers are expected to skip such files).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from tree_sitter import Node

from codevouch.syntax import registry
from codevouch.syntax.definitions import Found, definitions_in, resolve_language
from codevouch.syntax.languages import get_spec
from codevouch.syntax.lines import MODULE_SYMBOL, split_lines
from codevouch.syntax.spec import LanguageSpec
from codevouch.syntax.tree import Item, Syntax, parse, rows

__all__ = ["Chunk", "chunk_text"]

CountTokens = Callable[[str], int]


@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    symbol: str  # qualified symbol(s), ", "-joined when merged; "<module>" for top-level code
    text: str  # "\n".join(split_lines(source)[start_line - 1:end_line])
    # In a language where a definition may open with no keyword (spec.Language.keywordless): the qualified name
    # of every definition whose lines lie within the chunk, by the file's parse (a class kept whole
    # as one chunk has the class's symbol; `get value()` and `flush() {` are named here).
    defines: tuple[str, ...] = ()
    # Its code only declares (the language's spec.LanguageSpec.bodiless: a TypeScript interface,
    # type alias, overload signature or `declare`), with no body that does anything.
    declaration: bool = False


def _cut_rows(spec: LanguageSpec, nodes: Iterable[Node]) -> set[int]:
    """Rows after which a window may end cleanly: ends of statements."""
    stack = list(nodes)
    cuts = {rows(node)[1] for node in stack}
    while stack:
        node = stack.pop()
        if node.type in spec.blocks:
            cuts.update(rows(child)[1] for child in node.named_children)
        stack.extend(node.named_children)
    return cuts


# --------------------------------------------------------------------------
# Pieces and chunk assembly
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Piece:
    start: int  # 0-based rows, inclusive, trimmed of blank lines
    end: int
    names: tuple[str, ...]
    group: int  # pieces merge only within the same group ...
    mergeable: bool  # ... and only if both are mergeable
    tokens: int
    trivial: bool  # no alphanumeric character (e.g. a lone closing brace)


class _Chunker:
    def __init__(
        self,
        lines: list[str],
        count_tokens: CountTokens,
        budget: int,
        merge_target: int,
        syntax: Syntax | None,
    ) -> None:
        self.lines = lines
        self.count = count_tokens
        self.budget = budget
        self.merge_target = merge_target
        self.syntax = syntax
        self.pieces: list[_Piece] = []
        self._groups = 0
        self._overhead = count_tokens("")  # special tokens counted on any text
        self._line_costs: dict[int, int] = {}
        # The counter says a span's count is its lines' counts added (embedding.TokenCount):
        # then every line is tokenized once, however many nested spans hold it.
        self._lines_add_up = bool(getattr(count_tokens, "lines_add_up", False))

    # -- helpers -----------------------------------------------------------

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start : end + 1])

    def tokens(self, start: int, end: int) -> int:
        """Tokens of the text of rows start..end, as `count` gives them."""
        if self._lines_add_up:
            return self._overhead + sum(self.line_cost(row) for row in range(start, end + 1))
        return self.count(self.text(start, end))

    def blank(self, row: int) -> bool:
        return not self.lines[row].strip()

    def trim(self, start: int, end: int) -> tuple[int, int]:
        while start <= end and self.blank(start):
            start += 1
        while end >= start and self.blank(end):
            end -= 1
        return start, end

    def new_group(self) -> int:
        self._groups += 1
        return self._groups

    def add(self, start: int, end: int, names: tuple[str, ...], group: int,
            mergeable: bool, tokens: int | None = None) -> None:
        text = self.text(start, end)
        if tokens is None:
            tokens = self.tokens(start, end)
        trivial = not any(ch.isalnum() for ch in text)
        self.pieces.append(_Piece(start, end, names, group, mergeable, tokens, trivial))

    # -- splitting ---------------------------------------------------------

    def span(self, start: int, end: int, items: list[Item], symbol: str,
             group: int, header_mergeable: bool) -> None:
        """Emit a region: its definition items, and the code around them as
        pieces named ``symbol``.  The code before the first definition is the
        region's header."""
        cursor = start
        header = True
        for item in items:
            if not item.defs or item.end < cursor:
                continue
            item_start = max(item.start, cursor)
            if item_start > cursor:
                self.gap(cursor, item_start - 1, symbol, group,
                         header_mergeable or not header, items)
            header = False
            self.definition(item, item_start, group)
            cursor = item.end + 1
        if cursor <= end:
            self.gap(cursor, end, symbol, group, header_mergeable or not header, items)

    def gap(self, start: int, end: int, symbol: str, group: int, mergeable: bool,
            items: list[Item]) -> None:
        start, end = self.trim(start, end)
        if start > end:
            return
        tokens = self.tokens(start, end)
        if tokens <= self.budget:
            self.add(start, end, (symbol,), group, mergeable, tokens)
            return
        nodes = [n for it in items if it.end >= start and it.start <= end for n in it.nodes]
        self.windows(start, end, (symbol,), nodes)

    def definition(self, item: Item, start: int, group: int) -> None:
        start, end = self.trim(start, item.end)
        if start > end:
            return
        tokens = self.tokens(start, end)
        if tokens <= self.budget:
            self.add(start, end, item.names, group, True, tokens)
            return
        container = item.splittable
        if container is not None and self.syntax is not None:
            members = self.syntax.members(container)
            if any(m.defs for m in members):
                self.span(start, end, members, container.name, self.new_group(),
                          header_mergeable=False)
                return
        self.windows(start, end, item.names, list(item.nodes))

    def windows(self, start: int, end: int, names: tuple[str, ...],
                nodes: list[Node]) -> None:
        """Consecutive line windows within the budget, cut preferably after a
        statement (from the syntax tree) or before a blank line."""
        cuts = _cut_rows(self.syntax.spec, nodes) if self.syntax is not None and nodes else set()
        row = start
        while row <= end:
            row, _ = self.trim(row, end)
            if row > end:
                break
            last = self.largest_fit(row, end)
            if last < end:
                last = self.preferred_cut(row, last, end, cuts)
            w_start, w_end = self.trim(row, last)
            # Windows are never merged: each is its own group.
            self.add(w_start, w_end, names, self.new_group(), False)
            row = last + 1

    def line_cost(self, row: int) -> int:
        cost = self._line_costs.get(row)
        if cost is None:
            cost = max(self.count(self.lines[row]) - self._overhead, 0)
            self._line_costs[row] = cost
        return cost

    def largest_fit(self, start: int, end: int) -> int:
        """Last row such that start..row fits the budget (at least ``start``:
        a single over-long line is returned alone)."""
        # Estimate with per-line costs (exact for whitespace-separated
        # tokenizers), then verify on the real text.
        total = self._overhead + self.line_cost(start)
        last = start
        while last < end and total + self.line_cost(last + 1) <= self.budget:
            last += 1
            total += self.line_cost(last)
        while last > start and self.tokens(start, last) > self.budget:
            last -= 1
        return last

    def preferred_cut(self, start: int, last: int, end: int, cuts: set[int]) -> int:
        floor = start + (last - start) // 2  # don't make windows too small
        for row in range(last, floor - 1, -1):
            if row in cuts and not self.blank(row):
                return row
        for row in range(last, floor - 1, -1):
            if row < end and self.blank(row + 1) and not self.blank(row):
                return row
        return last

    # -- merging -----------------------------------------------------------

    def merged_chunks(self) -> list[Chunk]:
        merged: list[tuple[_Piece, list[str]]] = []
        for piece in self.pieces:
            if merged:
                prev, names = merged[-1]
                joined = self.try_merge(prev, piece)
                if joined is not None:
                    # Brace-only text names nothing when it has company.
                    if prev.trivial and not piece.trivial:
                        names = list(piece.names)
                    elif not piece.trivial:
                        names.extend(piece.names)
                    merged[-1] = (joined, names)
                    continue
            merged.append((piece, list(piece.names)))
        return [self.chunk(piece, names) for piece, names in merged]

    def try_merge(self, prev: _Piece, piece: _Piece) -> _Piece | None:
        same_level = prev.mergeable and piece.mergeable and prev.group == piece.group
        limit = self.budget if piece.trivial else self.merge_target if same_level else None
        if limit is None:
            return None
        # Cheap estimate first (blank lines between cost nothing), then verify.
        if prev.tokens + piece.tokens - self._overhead > limit:
            return None
        tokens = self.tokens(prev.start, piece.end)
        if tokens > limit:
            return None
        return _Piece(prev.start, piece.end, (), prev.group, prev.mergeable, tokens,
                      prev.trivial and piece.trivial)

    def chunk(self, piece: _Piece, names: list[str]) -> Chunk:
        unique = list(dict.fromkeys(n for n in names if n))
        symbol = ", ".join(unique) if unique else MODULE_SYMBOL
        return Chunk(piece.start + 1, piece.end + 1, symbol, self.text(piece.start, piece.end))


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def chunk_text(
    text: str,
    path: str,
    count_tokens: CountTokens,
    budget: int = 250,
    language: str | None = None,
    *,
    merge_target: int | None = None,
) -> tuple[list[Chunk], str | None]:
    """Split ``text`` into chunks of at most ``budget`` tokens.

    ``language`` overrides detection from ``path``'s extension.  Returns the
    chunks and the language used (None for unsupported text, which is cut
    into line windows preferring blank-line boundaries).  If parsing raises,
    the file falls back to line windows but its language is still returned.
    ``merge_target`` (default ``budget // 2``) bounds merges of small
    neighbours.
    """
    if budget < 1:
        raise ValueError("budget must be positive")
    lang = resolve_language(path, language, text)
    lines = split_lines(text)
    if not text.strip():
        return [], lang
    target = budget // 2 if merge_target is None else min(merge_target, budget)
    if lang is not None:
        try:
            return _chunk_syntax(text, lines, lang, count_tokens, budget, target), lang
        except Exception:  # noqa: BLE001 - any parser trouble: plain windows below
            pass
    chunker = _Chunker(lines, count_tokens, budget, target, syntax=None)
    chunker.windows(0, len(lines) - 1, (MODULE_SYMBOL,), [])
    return chunker.merged_chunks(), lang


def _chunk_syntax(text: str, lines: list[str], language: str,
                  count_tokens: CountTokens, budget: int, target: int) -> list[Chunk]:
    syntax = Syntax(get_spec(language))
    root = parse(text, language)
    chunker = _Chunker(lines, count_tokens, budget, target, syntax)
    items = syntax.items(root.named_children, "")
    chunker.span(0, len(lines) - 1, items, MODULE_SYMBOL, chunker.new_group(),
                 header_mergeable=True)
    chunks = chunker.merged_chunks()
    if syntax.spec.bodiless:
        chunks = _with_declarations(chunks, root, syntax.spec.bodiless)
    return _with_definitions(chunks, definitions_in(root, language)) if language in registry.keywordless() else chunks


def _with_declarations(chunks: list[Chunk], root: Node, bodiless: frozenset[str]) -> list[Chunk]:
    """Each chunk whose code is all declarations (`bodiless` nodes, comments and blank lines around
    them) marked so (Chunk.declaration)."""
    declared: set[int] = set()
    code: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        start, end = rows(node)
        if node.type in bodiless:
            declared.update(range(start, end + 1))
        elif "comment" in node.type:
            continue
        elif not node.children or (start == end and not any(c.type in bodiless for c in node.named_children)):
            code.update(range(start, end + 1))
        else:
            stack.extend(node.children)
    if not declared:
        return chunks
    # A row of both (`export interface X {`: the `export` keyword) is the declaration's.
    code -= declared
    out = []
    for ch in chunks:
        span = range(ch.start_line - 1, ch.end_line)
        own = not code.intersection(span) and not declared.isdisjoint(span)
        out.append(replace(ch, declaration=True) if own else ch)
    return out


def _with_definitions(chunks: list[Chunk], found: list[Found]) -> list[Chunk]:
    """Each chunk with the names of the definitions that lie within it (Chunk.defines): their
    own lines, from the name's node, not the comments above."""
    spans = sorted((rows(f.node), f.name) for f in found if f.name)
    out = []
    for ch in chunks:
        names = [name for (start, end), name in spans if ch.start_line <= start + 1 and end + 1 <= ch.end_line]
        out.append(replace(ch, defines=tuple(dict.fromkeys(names))) if names else ch)
    return out
