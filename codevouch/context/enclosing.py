"""What the pure packer needs from the working tree: for each snippet cut out of a definition,
that definition and its signature lines (pack.py decides nothing with files; this reads
them, once per file); and for a search hit that shows only the head of a container (a class's
header chunk), the container's outline (`outlines`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from codevouch.context.pack import Enclosing, Lines
from codevouch.syntax.lines import MODULE_SYMBOL, split_lines
from codevouch.syntax.outline import Members
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


def outlines(root: Path, results: Sequence[Validated],
             rules_of: Callable[[Path], Rules] = load_worktree_rules) -> dict[int, Members]:
    """position (0-based) -> the outline of the container whose head a current-code result shows,
    when its members lie below the code (a class too long for one chunk is indexed as a header
    chunk and one chunk per member: a hit on the class name was the header alone). Read from the
    working-tree file, the current version of the code, so it is as current as the hit's code;
    nothing is stored. A file is parsed only when the line after the code is still inside it
    (indented deeper than the code's first line, or more braces opened than closed)."""
    from codevouch.syntax.outline import members, outline
    from codevouch.validator.parsecache import CACHE

    texts: dict[str, list[str] | None] = {}
    limit: list[int] = []
    found: dict[int, Members] = {}
    for position, v in enumerate(results):
        c = v.current
        if v.verdict not in CURRENT_VERDICTS or c is None or not c.symbol or c.symbol == MODULE_SYMBOL:
            continue
        if c.path not in texts:
            loc = locate(root, c.path)
            if not limit:
                limit.append(rules_of(root).max_file_bytes)
            read_ = read_text(root, loc.real, limit[0]) if loc.inside and loc.exists and loc.real else None
            texts[c.path] = split_lines(read_) if isinstance(read_, str) else None
        lines = texts[c.path]
        if lines is None or not _continues(lines, c.start_line, c.end_line):
            continue
        whole = "\n".join(lines)
        language = v.snippet.get("language")
        lang = language if isinstance(language, str) else ""
        defs = CACHE.get("outline", lang, whole, lambda: outline(whole, c.path, lang or None))  # noqa: B023
        got = members(defs, c.symbol, c.start_line, c.end_line) if defs else None
        if got is not None:
            found[position] = got
    return found


def _continues(lines: list[str], start: int, end: int) -> bool:
    """Whether the definition that starts at line `start` goes on after line `end`: the next
    line with text is indented deeper than line `start`, or lines start..end open more braces
    than they close."""
    if start < 1 or end >= len(lines):
        return False
    shown = lines[start - 1:end]
    if sum(line.count("{") - line.count("}") for line in shown) > 0:
        return True
    head = shown[0] if shown else ""
    after = next((line for line in lines[end:] if line.strip()), None)
    return after is not None and _indent_of(after) > _indent_of(head)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip())
