"""Lexical terms of a chunk for the SQLite FTS5 index that complements dense search.

Code identifiers hide words: `cancelOrder`, `cancel_order` and `CancelOrderHandler` all say
"cancel order". Each identifier is indexed whole and split into its parts, so a query in
words meets code in identifiers. Pure functions; the ledger stores and queries the terms.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from codevouch.caches import clearable
from codevouch.syntax import registry

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[^\W\d_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_STOP = frozenset("a an and are as at be by for from in is it of on or the this to with".split())


def identifier_terms(word: str) -> list[str]:
    return list(_identifier_terms(word) if len(word) <= _KEPT_LENGTH else _split(word))


# Kept by word: code repeats its identifiers (`self`, `return`, a class's own names), and
# splitting each occurrence again was a third of the time an overlay spent chunking a file.
# Words up to this length only, so the caches stay small whatever a file holds.
_KEPT_LENGTH = 64


@clearable
@lru_cache(maxsize=1 << 16)
def _identifier_terms(word: str) -> tuple[str, ...]:
    return _split(word)


def _split(word: str) -> tuple[str, ...]:
    parts = [p.lower() for chunk in word.split("_") for p in _CAMEL.findall(chunk)]
    whole = word.lower().strip("_")
    return (whole, *(p for p in parts if p != whole)) if whole else tuple(parts)


@clearable
@lru_cache(maxsize=1 << 16)
def _kept_terms(word: str) -> tuple[str, ...]:
    return tuple(t for t in _identifier_terms(word) if t and t not in _STOP)


def terms(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORD.findall(text):
        if len(word) <= _KEPT_LENGTH:
            out.extend(_kept_terms(word))
        else:
            out.extend(t for t in _split(word) if t and t not in _STOP)
    return out


def parts(text: str) -> list[str]:
    """The words of `text` in order, identifiers split into their parts, stop words left out."""
    out: list[str] = []
    for word in _WORD.findall(text):
        split = identifier_terms(word)
        out.extend(t for t in (split[1:] or split) if t and t not in _STOP)
    return out


# Between a document's terms and the names its chunk's own parse defines (`document`): what
# follows it is no term (`split`), so the words a ranking counts stay the chunk's.
_DEFINES = "\x1e"


def document(text: str, path: str, symbol: str, defines: Sequence[str] = ()) -> str:
    """What the lexical index holds for one chunk: its path, symbol and code, as split terms; then
    the qualified names the chunker's parse says it defines (indexer/chunker.Chunk.defines: in a
    language where a definition may open with no keyword, a class kept whole as one chunk carries
    the class's symbol only, and `get value()` and `flush() {` are named there)."""
    doc = " ".join(terms(path.replace("/", " ").replace(".", " ")) + terms(symbol) + terms(text))
    # The names are stored space-separated and read by name_keys, which splits a symbol at ",".
    names = [name for name in defines if name and "," not in name and " " not in name]
    return f"{doc} {_DEFINES} {' '.join(names)}" if names else doc


def split(doc: str) -> tuple[str, list[str]]:
    """A document's terms, and the names its chunk's parse defines (`document`)."""
    words, sep, names = doc.partition(_DEFINES)
    return (words.rstrip(), names.split()) if sep else (doc, [])


def match_query(query: str) -> str | None:
    """An FTS5 MATCH expression: any of the query's terms, each quoted (query text is data)."""
    words = list(dict.fromkeys(terms(query)))
    return " OR ".join(f'"{w}"' for w in words) if words else None


# -- names: what a chunk defines, as a query may spell it --------------------------------------
# A chunk's symbol is its qualified definitions, ", "-joined ("Client.send", "Headers, Headers.items");
# "<module>" (codevouch.syntax.lines.MODULE_SYMBOL) names none.
_MODULE = "<module>"
# One identifier as a query writes it. JavaScript, TypeScript and Java take `$` in a name (`$`,
# `source$`, a bundle's `AxiosError$1`), so it is part of the name, not a break in it.
IDENTIFIER = r"(?:[^\W\d]|\$)[\w$]*"
_NAME_TOKEN = re.compile(rf"{IDENTIFIER}(?:(?:\.|::){IDENTIFIER})*")
_SQUASH = re.compile(r"[\W_]+")
_QUERY_WORD = re.compile(r"\w+")
_BACKTICKED = re.compile(r"`([^`]+)`")
# Words of a query that ask for tests: a test chunk is then not ranked below source (settings.py).
TEST_WORDS = frozenset("test tests testing tested fixture fixtures pytest unittest unittests conftest "
                       "spec specs mock mocks mocking".split())


def squashed(name: str) -> str:
    """A name without case or separators: `raise_for_status`, `RaiseForStatus`, "raise for status"
    all give "raiseforstatus" (marked "~" so it never meets an exact name)."""
    return "~" + _SQUASH.sub("", name).lower()


def _components(name: str) -> list[str]:
    return [c for c in re.split(r"\.|::", name) if c]


def name_keys(symbol: str) -> list[str]:
    """What a chunk defines, as exact keys: each qualified name and each of its dotted tails
    (`a.B.send`, `B.send`, `send`), lower case, and the last component squashed (`squashed`)."""
    keys: list[str] = []
    for name in (n.strip() for n in symbol.split(",")):
        if not name or name == _MODULE:
            continue
        parts = _components(name)
        keys += [".".join(parts[i:]).lower() for i in range(len(parts))]
        if parts:
            keys.append(squashed(parts[-1]))
    return list(dict.fromkeys(k for k in keys if k and k != "~"))


# Keywords that open a definition, in the languages the chunker knows: in a lexical document
# (`terms`, which keeps word order and whole identifiers) the term after one is a defined name.
_KEYWORDS = registry.keywords()
_NAME = re.compile(r"[^\W\d]\w*")


def _defined_in(document: str, methods: frozenset[str] = frozenset()) -> list[str]:
    """The names a lexical document's text defines: the term after a keyword, unless that keyword
    is a part of an identifier just before it (`hidden_prompt_func` is followed by its parts
    `hidden prompt func`, and `func` there opens nothing), or the term is a Go method's receiver:
    `func (c *Command) Execute` reads `func c command execute`, and `c` is no definition when
    `command.execute` is one of `methods` (the chunk's own qualified names, lower case)."""
    tokens = document.split()
    found = []
    for i, token in enumerate(tokens[:-1]):
        if token not in _KEYWORDS or not _NAME.fullmatch(tokens[i + 1]):
            continue
        before = tokens[max(0, i - 8):i]
        if any(len(w) > len(token) and (token in w.split("_") or w.endswith(token) or w.startswith(token))
               for w in before):
            continue
        if token == "func" and ".".join(tokens[i + 2:i + 4]) in methods:
            found.append(tokens[i + 3])
            continue
        found.append(tokens[i + 1])
    return list(dict.fromkeys(found))


def definition_keys(document: str, symbol: str) -> list[str]:
    """The exact keys of everything a chunk defines: its symbol's (`name_keys`), the names its
    text defines after a keyword (a small class merged into one chunk carries the class's symbol
    only), each also under the symbol's names (`response.raise_for_status`), and the names its
    parse defines (`document`)."""
    words, parsed = split(document)
    keys = name_keys(symbol)
    outer = [n.strip().lower() for n in symbol.split(",") if n.strip() and n.strip() != _MODULE]
    for name in _defined_in(words, frozenset(".".join(_components(o)[-2:]) for o in outer)):
        keys += [name, squashed(name), *(f"{o}.{name}" for o in outer[:8] if o != name and not o.endswith("." + name))]
    for parsed_name in parsed:
        keys += name_keys(parsed_name)
    return list(dict.fromkeys(k for k in keys if k and k != "~"))


def spelled_as_defined(query: str, symbol: str) -> bool:
    """The query is, case and all, one of the symbol's names or dotted tails (`progressbar` is
    the function `progressbar`, not the class `ProgressBar`, though both match case-insensitively)."""
    return spelled_exactly(query.strip(), symbol)


def spelled_exactly(text: str, symbol: str) -> bool:
    """`spelled_as_defined` for a query already stripped of surrounding white space (`text`)."""
    for name in (n.strip() for n in symbol.split(",")):
        parts = _components(name)
        if any(".".join(parts[i:]) == text for i in range(len(parts))):
            return True
    return False


def _identifier_shaped(token: str) -> bool:
    """A token written as code, not as a word: `raise_for_status`, `GZipDecoder`, `Client.send`,
    `getX` (a capital after the first letter), `source$` (a `$` beside a name); "Parse" or "headers" are words, and so is an
    acronym in capitals (`HTTP`, `URL`, `ID`, `JSON2`): in "register a custom HTTP method" it
    names the protocol, not a definition called `HTTP`."""
    if "_" in token.strip("_") or "." in token or "::" in token or ("$" in token and token.strip("$")):
        return True
    return any(ch.isupper() for ch in token[1:]) and not token.isupper()


# A name as Ruby (`route!`, `updated?`) and shell (`compare-fields`) may write it: characters an
# identifier does not hold, read as one name only when the whole query is that name.
_SPELLED_PART = rf"{IDENTIFIER}(?:-[\w$]+)*"
_SPELLED = re.compile(rf"(?:{_SPELLED_PART}(?:\.|::))*{_SPELLED_PART}[?!]?")


def query_name_keys(query: str, whole_only: bool = False) -> list[str]:
    """The names a query spells exactly, as `name_keys` writes them: the whole query when it is
    one name (`send`, `Client.send`, `raise_for_status`) or one name's words ("raise for status"),
    and, unless `whole_only`, each token of the query written as code (`raise_for_status`,
    `GZipDecoder`, or any word in backticks). Other words, acronyms in capitals among them
    (`HTTP`, `URL`), name nothing in a query of several words."""
    text = query.strip()
    if _BACKTICKED.fullmatch(text):
        text = text.strip("`").strip()
    keys: list[str] = []
    whole = _NAME_TOKEN.fullmatch(text)
    tokens = _NAME_TOKEN.findall(text)
    quoted = {t for span in _BACKTICKED.findall(text) for t in _NAME_TOKEN.findall(span)}
    for token in tokens:
        if whole is None and (whole_only or not (_identifier_shaped(token) or token in quoted)):
            continue
        parts = _components(token)
        keys += [".".join(parts[i:]).lower() for i in range(max(1, len(parts) - 1))]
        if len(parts) == 1:   # `Client.send` is that method, not every `send`
            keys.append(squashed(token))
    if whole is None and _SPELLED.fullmatch(text):
        # `route!`, `Base.updated?`, `compare-fields`, `single-use-latch::wait`: one name as written
        keys.append(".".join(_components(text)).lower())
    words = _QUERY_WORD.findall(text)
    if whole is None and len(words) >= 2 and len(words) <= 8 and " ".join(words) == " ".join(text.split()):
        keys.append(squashed("".join(words)))
    return list(dict.fromkeys(k for k in keys if k and k != "~"))


def names_tests(query: str) -> bool:
    """The query asks for tests (`test`, `fixture`, `pytest`, ... or an identifier holding one)."""
    return holds_test_words(terms(query))


def holds_test_words(words: Iterable[str]) -> bool:
    """`names_tests` for a query's terms already split (`terms`)."""
    return any(w in TEST_WORDS for w in words)


def name_words(symbol: str) -> str:
    """The words of what a chunk defines (`Client.raise_for_status` -> "client raise status")."""
    return " ".join(parts(" ".join(n for n in symbol.split(",") if n.strip() != _MODULE)))


def own_name_words(symbol: str) -> str:
    """The words of the names a chunk defines, each without its container's
    (`Client.raise_for_status` -> "raise status"; a class's own chunk, `Client` -> "client"):
    a method's name says what it does, its class's where, and the class's words would count
    again in every member."""
    own = (_components(n.strip())[-1:] for n in symbol.split(",") if n.strip() and n.strip() != _MODULE)
    return " ".join(parts(" ".join(c for comps in own for c in comps)))
