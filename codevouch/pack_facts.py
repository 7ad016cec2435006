"""What the pure packer needs from the working tree: the signature lines of each function a
snippet was cut out of (pack.py decides nothing with files; this reads them, once per file)."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codevouch.pack import Signature
from codevouch.syntax.lines import MODULE_SYMBOL, split_lines
from codevouch.validator.facts import read_text
from codevouch.validator.model import Validated
from codevouch.validator.paths import locate


def signatures(root: Path, results: Sequence[Validated]) -> dict[int, Signature]:
    """rank (1-based, as pack.items_of counts) -> the restored signature, for each current-code
    snippet that starts inside a definition's body. Files outside the repository, unreadable
    files and unsupported languages give nothing."""
    from codevouch.syntax.signature import signature_span

    texts: dict[str, str | None] = {}
    found: dict[int, Signature] = {}
    for rank, v in enumerate(results, 1):
        if v.verdict not in ("usable", "stale-but-ok"):
            continue     # a re-read current version is the whole definition already
        c = v.current
        path, start, symbol = (c.path, c.start_line, c.symbol or v.parsed.symbol) if c else \
            (v.parsed.path, v.parsed.start_line, v.parsed.symbol)
        if not symbol or symbol == MODULE_SYMBOL or start is None or start <= 1:
            continue
        if path not in texts:
            loc = locate(root, path)
            texts[path] = read_text(root, loc.real) if loc.inside and loc.exists and loc.real else None
        text = texts[path]
        span = signature_span(text, path, symbol, start) if text is not None else None
        if span is not None:
            lines = split_lines(text)[span[0] - 1:span[1]]  # type: ignore[arg-type]
            found[rank] = Signature(span[0], span[1], "\n".join(lines))
    return found
