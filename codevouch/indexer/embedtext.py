"""What the model embeds for a chunk: its path and symbol above its text.

A method's text seldom says where it lives: httpx's `def items(self)` never says "headers",
and a query that asks for "the items of headers" cannot meet it by meaning. The path and the
qualified symbol (`Headers.items`) say it. Only the embedded text carries them: the stored
snippet, its lines and the lexical document (which has its own path and symbol terms, see
codevouch.store.lexical.document) are unchanged.

A chunk's `text_hash` is the hash of this text, so the embedding cache and the store's one
vector per distinct text key on what was embedded: two files with one text get two vectors,
and a renamed file's chunks are embedded again. The form is part of the vector space's name
(store.space_name), so an index embedded another way (releases before embedded the text alone)
moves to a new space on its next build, embedding each chunk once more.

Chosen on the quality figure's tuning corpora (python -m codevouch_bench.quality --tune, rows
`context-*`): dense MRR@10 0.564 -> 0.599 (path), 0.630 (symbol), 0.648 (both); hybrid 0.666
-> 0.679 with both. Held-out corpora: hybrid 0.576 -> 0.616. Pure function.
"""
from __future__ import annotations

from codevouch.embedding import DEFAULT_EMBED_CONTEXT
from codevouch.printable import faithful
from codevouch.syntax.lines import MODULE_SYMBOL


def embedded_text(path: str, symbol: str, text: str, context: str | None = DEFAULT_EMBED_CONTEXT) -> str:
    """The text the model embeds for a chunk, as `context` (the build's Settings.embed_context)
    says: never with a lone surrogate (see faithful)."""
    head = [path] if context in ("path", "path-symbol") else []
    if context in ("symbol", "path-symbol") and symbol != MODULE_SYMBOL:
        head.append(symbol)
    return faithful("\n".join([*head, text]))
