"""Which candidates of the name tier define a name the query spells, by the language's syntax.

The lexical copy's name field proposes them (a keyword before a name, in its terms), but its
terms cannot tell code from a comment, a string or prose: `// func Mux()` commented out in a
test, "func Mux" in CHANGELOG.md and `"Recoverer"` in a JSON file all read like definitions
there. A candidate is kept only when its chunk's symbol (the chunker's parse) names the
definition, or the file's tree-sitter parse has the definition inside the chunk's lines; a
file of a language without a grammar defines nothing. A qualified name (`chi.URLParam`) is kept
where the rest is defined and the qualifier names the file's package or module.
"""
from __future__ import annotations

import functools
import re
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from codevouch import caches
from codevouch.retriever.query import Query
from codevouch.retriever.stubs import declares_only
from codevouch.store import ChunkRecord, lexical
from codevouch.syntax import registry
from codevouch.syntax.definitions import resolve_language, walk
from codevouch.syntax.lines import decode
from codevouch.syntax.packages import qualifies

# The name field holds what a chunk defines by the chunker's parse (indexer/chunker.Chunk.defines),
# but not for a chunk indexed before it did: in a language whose definitions may have no keyword
# (KEYWORDLESS), the first chunks of the lexical list are proposed as well, and the parse of the
# whole file decides.
# How many of the lexical list's first chunks are proposed (each one's file parsed once, then cached).
LEXICAL_PROPOSALS = 8

# blob id and path -> (qualified name, its line) of every definition in the file
_PARSED: OrderedDict[tuple[str, str], list[tuple[str, int]]] = OrderedDict()
_KEEP = 256


def confirmed(ids: Sequence[str], records: dict[str, ChunkRecord], query: Query,
              read: Callable[[list[str]], dict[str, bytes]]) -> list[str]:
    """The ids, in order, whose chunk defines one of the query's names (`read`: blob ids -> contents)."""
    exact = set(query.names)
    kept: set[str] = set()
    todo: list[str] = []
    for cid in ids:
        rec = records[cid]
        if not may_define(rec):
            continue    # prose, data and config define nothing
        if by_symbol(rec, exact):
            kept.add(cid)
        else:
            todo.append(cid)
    blobs = read(list(dict.fromkeys(records[cid].blob_sha for cid in todo))) if todo else {}
    for cid in todo:
        rec = records[cid]
        data = blobs.get(rec.blob_sha)
        if data is None:
            continue
        text = decode(data)
        names = [name.lower() for name in _inside(rec, text)]
        keys = {key for name in names for key in lexical.name_keys(name)}
        # A qualified name's rest is the file's own qualified name: `client.handle_request` is
        # a function of module client, not every method `handle_request` in it.
        if not exact.isdisjoint(keys) or any(q.key in names and qualifies(q.qualifier, rec.path, text)
                                             for q in query.qualified):
            kept.add(cid)
    return [cid for cid in ids if cid in kept]


def defined_inside(ids: Sequence[str], records: dict[str, ChunkRecord],
                   read: Callable[[list[str]], dict[str, bytes]]) -> dict[str, list[str]]:
    """Each id's definitions whose node starts inside its chunk (`_inside`), qualified names as
    written; each chunk's file read and parsed once for every question below."""
    todo = [cid for cid in ids if may_define(records[cid])]
    blobs = read(list(dict.fromkeys(records[cid].blob_sha for cid in todo))) if todo else {}
    return {cid: _inside(records[cid], decode(data)) for cid in todo
            if (data := blobs.get(records[cid].blob_sha)) is not None}


def spelled_as_written(ids: Sequence[str], records: dict[str, ChunkRecord], query: Query,
                       inside: Mapping[str, list[str]]) -> set[str]:
    """The ids whose chunk defines a name spelled as the query writes it (lexical.spelled_exactly):
    by its symbol, or by a definition merged into it (a module's window, a class's header piece
    that holds its small members), which the symbol does not name: `Logger` in a chunk whose
    symbol is `<module>, Sinatra` before the method `logger` that a chunk's symbol names."""
    return {cid for cid in ids if lexical.spelled_exactly(query.stripped, records[cid].symbol)
            or any(lexical.spelled_exactly(query.stripped, name) for name in inside.get(cid, ()))}


def constructors_only(ids: Sequence[str], records: dict[str, ChunkRecord], names: Collection[str],
                      inside: Mapping[str, list[str]]) -> set[str]:
    """The ids whose chunk defines the query's name only as a member named like its own container,
    a constructor (`InvoiceBook::InvoiceBook` in invoice_book.cc), when the query names the bare
    name: for `InvoiceBook` the class is the answer, and its constructor a part of it. A query that
    qualifies it (`InvoiceBook::InvoiceBook`) asks for the constructor."""
    wanted = set(names)
    out: set[str] = set()
    for cid in ids:
        rec = records[cid]
        matched = [(n, wanted.intersection(lexical.name_keys(n))) for n in (*rec.symbol.split(","), *inside.get(cid, ()))]
        matched = [(n, keys) for n, keys in matched if keys]
        if matched and all(_constructor(n) and not any("." in k for k in keys) for n, keys in matched):
            out.add(cid)
    return out


def _constructor(name: str) -> bool:
    parts = [p for p in re.split(r"\.|::", name.strip()) if p]
    return len(parts) >= 2 and parts[-1] == parts[-2]


def _inside(rec: ChunkRecord, text: str) -> list[str]:
    """The qualified names, as written, of the definitions whose node starts inside the chunk's lines."""
    return [name for name, line in _definitions(rec.blob_sha, rec.path, text) if rec.start_line <= line <= rec.end_line]


def proposed(named: list[str], lexical_ids: Sequence[str], records: dict[str, ChunkRecord]) -> list[str]:
    """The candidates to confirm: the name field's (`named`), then the first live chunks of the
    lexical list in a language where a definition may have no keyword before it (KEYWORDLESS)."""
    seen = set(named)
    return named + [cid for cid in lexical_ids[:LEXICAL_PROPOSALS]
                    if cid not in seen and records[cid].status == "live"
                    and _language(records[cid]) in registry.keywordless()]


def may_define(rec: ChunkRecord) -> bool:
    """The chunk's file has a grammar: prose, data and config define nothing (`confirmed`)."""
    return _language(rec) is not None


def by_symbol(rec: ChunkRecord, names: Collection[str]) -> bool:
    """The chunk's symbol (the chunker's parse) defines one of `names`, in a file of a language
    with a grammar (a Markdown or JSON chunk names no definition, whatever its symbol)."""
    return (bool(names) and _language(rec) is not None
            and not set(names).isdisjoint(lexical.name_keys(rec.symbol)))


def _own_names(rec: ChunkRecord, names: Collection[str]) -> list[str]:
    """The names of the chunk's symbol that define one of `names`, as written."""
    return [n for n in (p.strip() for p in rec.symbol.split(",")) if n and not set(names).isdisjoint(lexical.name_keys(n))]


def member_names(recs: Iterable[ChunkRecord], names: Collection[str]) -> set[str]:
    """The last components, as written, of the class members among `recs` that define one of
    `names` (`getPath` of `ALBProcessor.getPath`)."""
    return {re.split(r"\.|::", n)[-1] for rec in recs for n in _own_names(rec, names) if "." in n or "::" in n}


def freely(rec: ChunkRecord, names: Collection[str], members: Collection[str]) -> bool:
    """The chunk defines one of `names` as a free definition (of its module, not of a class)
    spelled as one of `members` is: `getPath` in utils/url.ts beside `ALBProcessor.getPath`, but
    not the struct `RemainingCoreMetadata` beside the method `remaining_core_metadata`."""
    return any("." not in n and "::" not in n and n in members for n in _own_names(rec, names))


# A definition's rank key (`rank_key`), before its fused score: (defines, words of its place, own
# case, not a constructor, implementation, free); every other chunk's is this, below every definition's.
NOT_A_DEFINITION = (False, 0, False, False, False, False)
RankKey = tuple[bool, int, bool, bool, bool, bool]


def rank_key(rec: ChunkRecord, read: Query, names: Collection[str], members: Collection[str],
             own_case: bool = False, constructor: bool = False) -> RankKey:
    """The rank key of a chunk that defines one of the query's `names`, which sorts before the fused
    score (several definitions of a name rank by the rest of the query after it): first the one
    whose place the query's other words name (`url getPath`, `getPath in utils`: src/utils/url.ts),
    then one spelled with the query's own case (`progressbar` before `ProgressBar`; `own_case`: a
    definition merged into a chunk spells it so), then the name's own definition before a
    constructor named like it (`constructor`: constructors_only; the class `InvoiceBook` in a
    header before `InvoiceBook::InvoiceBook` in its source file), then an
    implementation before its declaration (lib/option.js before typings/index.d.ts, whose chunks
    hold a dozen signatures and win on words; a function before its overload signatures), then a
    free definition before same-named members of classes (`getPath` in utils/url.ts before four
    `*Processor.getPath`), unless the query qualifies the name (`members`: member_names)."""
    return (True, place_words(rec, read, names), own_case or lexical.spelled_exactly(read.stripped, rec.symbol),
            not constructor, not declares_only(rec), freely(rec, names, members))


def place_words(rec: ChunkRecord, read: Query, names: Collection[str]) -> int:
    """How many of the query's other words (`other_words`) the chunk's path or the containers of
    the name it defines hold (`url getPath`: url, in src/utils/url.ts; `processor getPath`:
    processor, in `ALBProcessor.getPath`); a plural meets its singular (`util` and `utils`)."""
    own = _own_names(rec, names)
    other = other_words(read, frozenset(names).intersection(k for n in own for k in lexical.name_keys(n)))
    if not other:
        return 0
    place = set(lexical.parts(re.sub(r"[/.\\]", " ", rec.path)))
    place.update(w for n in own for container in re.split(r"\.|::", n)[:-1] for w in lexical.parts(container))
    place.update({w[:-1] for w in place if w.endswith("s")})
    return sum(1 for w in other if w in place or (w.endswith("s") and w[:-1] in place))


@caches.clearable
@functools.lru_cache(maxsize=64)
def other_words(read: Query, matched: frozenset[str]) -> frozenset[str]:
    """The query's words that are not those of the name a definition matched by (`matched`, its
    keys): `url getPath` -> url; `getPath in utils` -> utils; none in `ProgressBar`,
    `Client.send`, or "raise for status" when a definition's squashed name is all its words."""
    spelled: set[str] = set()
    for token in _TOKEN.findall(read.text):
        parts = [p for p in re.split(r"\.|::", token) if p]
        keys = {".".join(parts[i:]).lower() for i in range(len(parts))} | {"~" + re.sub(r"[\W_]+", "", parts[-1]).lower()}
        if not matched.isdisjoint(keys):
            spelled.update(lexical.parts(token))
    if not spelled:
        return frozenset()     # matched by the squashed words of the whole query: they are all its name's
    return frozenset(w for w in read.parts if w not in spelled)


_TOKEN = re.compile(rf"{lexical.IDENTIFIER}(?:(?:\.|::){lexical.IDENTIFIER})*")


def _language(rec: ChunkRecord) -> str | None:
    """The language the chunk was parsed as: its path's, or the one its record says where the
    path alone does not tell (a script named by its `#!` line: registry.of_file)."""
    return resolve_language(rec.path, None) or (rec.language if rec.language in registry.names() else None)


def _definitions(blob: str, path: str, text: str) -> list[tuple[str, int]]:
    """(qualified name as written, line of the definition's own node) for every definition the
    file's parse has."""
    found = _PARSED.get((blob, path))
    if found is not None:
        _PARSED.move_to_end((blob, path))
        return found
    lang = resolve_language(path, None, text)
    walked = walk(text, lang) if lang is not None else None
    found = [(f.name, f.node.start_point[0] + 1) for f in (walked[1] if walked else ())]
    _PARSED[(blob, path)] = found
    while len(_PARSED) > _KEEP:
        _PARSED.popitem(last=False)
    return found


caches.register("codevouch.retriever.defined.parsed", _PARSED.clear, _PARSED.__len__)
