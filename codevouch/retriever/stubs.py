"""A declaration after the implementation it declares, for every query (pure).

A declaration is a chunk of a declaration file (a `.pyi` stub, a `.d.ts`, a C header) or one
whose code only declares (`ChunkRecord.declaration`: a TypeScript interface, type alias or
overload signature, by the chunker's parse).

A `.pyi` stub or a `.d.ts` declaration holds the very signature and docstring of the code it
declares, so it matches a query as well as the code does and often better (a dozen signatures
in one chunk). What a reader wants is the code: where both are candidates, the implementation
takes the declaration's place and the declaration follows it. A declaration with no
implementation among the candidates (none indexed, or none matched) keeps its place: it is the answer.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from codevouch.store import ChunkRecord
from codevouch.syntax.extensions import is_declaration_file

T = TypeVar("T")


def _qualified(symbol: str) -> set[str]:
    """A chunk's own qualified names, lower case (no tails: `Client.send` is not every `send`),
    less a container named beside its own member: a chunk of `ns.crc32c, ns.crc32c.Unmask` is
    about Unmask, not about every other piece of namespace ns.crc32c."""
    names = {n.strip().lower() for n in symbol.split(",") if n.strip() and n.strip() != "<module>"}
    return {n for n in names if not any(other.startswith(n + ".") for other in names)}


def _declares(stub: ChunkRecord, code: ChunkRecord) -> bool:
    """`stub` declares what `code` defines: a qualified name of one is the other's, or a dotted
    tail of it of two parts or more (`client.Client.send` and `Client.send`, never a bare `send`)."""
    mine, theirs = _qualified(stub.symbol), _qualified(code.symbol)
    return not mine.isdisjoint(theirs) or any(
        (a.endswith("." + b) and "." in b) or (b.endswith("." + a) and "." in a) for a in mine for b in theirs)


def declares_only(rec: ChunkRecord) -> bool:
    """The chunk declares what another chunk may implement: a declaration file's, or one whose
    code only declares (ChunkRecord.declaration)."""
    return rec.declaration or is_declaration_file(rec.path)


def after_implementations(found: list[tuple[ChunkRecord, T]],
                          tier: Callable[[ChunkRecord], Any] = lambda rec: 0) -> list[tuple[ChunkRecord, T]]:
    """`found` (best first) with each declaration's implementation moved to its place, the
    declaration right after it; the rest keep their order. An implementation moves only within
    its `tier` (defined.rank_key): the header's class `InvoiceBook`, the definition a query names,
    stays before a piece of the same namespace in the source file that merely names it."""
    if not any(declares_only(rec) for rec, _ in found):
        return found
    out = list(found)
    i = 0
    while i < len(out):
        rec = out[i][0]
        if declares_only(rec):
            at = next((j for j in range(i + 1, len(out))
                       if not declares_only(out[j][0]) and tier(out[j][0]) == tier(rec)
                       and _declares(rec, out[j][0])), None)
            if at is not None:
                out.insert(i, out.pop(at))
                i += 1      # the declaration now follows its implementation
        i += 1
    return out
