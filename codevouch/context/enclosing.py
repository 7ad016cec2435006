"""What the pure packer needs from the working tree: for each snippet cut out of a definition,
that definition and its signature lines (pack.py decides nothing with files; this reads
them, once per file)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from codevouch.context.pack import Enclosing, Lines
from codevouch.syntax.lines import MODULE_SYMBOL, split_lines
from codevouch.syntax.signature import Spans
from codevouch.validator.model import Validated
from codevouch.vocabulary import CURRENT_VERDICTS
from codevouch.worktree.files import load_worktree_rules, read_text
from codevouch.worktree.paths import locate
from codevouch.worktree.rules import Rules


def enclosing(root: Path, results: Sequence[Validated],
              rules_of: Callable[[Path], Rules] = load_worktree_rules) -> dict[int, Enclosing]:
    """rank (1-based, as pack.items_of counts) -> the definition a current-code snippet lies
    in, when the snippet is only part of it. Files outside the repository, unreadable files, files over the size cap
    and unsupported languages give nothing. rules_of: the working tree's rules (the call's
    CallSettings.rules), asked for the size cap when a file is first read."""
    from codevouch.syntax.signature import finder

    texts: dict[str, str | None] = {}
    finders: dict[str, Callable[[str, int], Spans | None] | None] = {}
    found: dict[int, Enclosing] = {}
    limit: list[int] = []       # the size cap, once the first file is read (the repository's rules)
    for rank, v in enumerate(results, 1):
        if v.verdict not in CURRENT_VERDICTS:
            continue     # a re-read current version is the whole definition already
        path, start, end, symbol = _located(v)
        if not symbol or symbol == MODULE_SYMBOL or start is None:
            continue
        if path not in texts:     # each file read and parsed once, however many snippets it has
            loc = locate(root, path)
            if not limit:
                limit.append(rules_of(root).max_file_bytes)
            read_ = read_text(root, loc.real, limit[0]) if loc.inside and loc.exists and loc.real else None
            file_text = texts[path] = read_ if isinstance(read_, str) else None     # over the cap: nothing
            finders[path] = finder(file_text, path) if file_text is not None else None
        text, find = texts[path], finders[path]
        spans = find(symbol, start) if find is not None else None
        if spans is None or text is None or (spans[0][0] == start and spans[0][1] == end):
            continue     # not inside a definition, or the snippet is the whole of it
        lines = split_lines(text)

        def read(span: tuple[int, int]) -> Lines:
            return Lines(span[0], span[1], "\n".join(lines[span[0] - 1:span[1]]))  # noqa: B023

        found[rank] = Enclosing(read(spans[0]), read(spans[1]) if spans[1] else None)
    return found


def _located(v: Validated) -> tuple[str, int | None, int | None, str | None]:
    """A snippet's path, lines and symbol: its current version's when it has one (the symbol the
    snippet named when that one has none), else the snippet's own."""
    c = v.current
    return (c.path, c.start_line, c.end_line, c.symbol or v.parsed.symbol) if c else \
        (v.parsed.path, v.parsed.start_line, v.parsed.end_line, v.parsed.symbol)
