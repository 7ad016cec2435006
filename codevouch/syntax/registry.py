"""Every language codevouch parses, and the lookups the rest of the house reads them through.

One line per language in `LANGUAGES`; a new language is its module in syntax/langs/ and a line
here. Each lookup is built once from `LANGUAGES` and cleared with the process-wide caches
(`codevouch.clear_caches`): the parse path (detection, grammars, definition rules) reads them per
call, so a test can extend `LANGUAGES` and see the chunker and the definition finder follow; the
few tables read in hot loops (the lexical keywords, check-refs' fences) are read once at import.
No tree-sitter here (syntax/languages.py loads the grammars).
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache

from codevouch.caches import clearable
from codevouch.syntax.langs.c import C
from codevouch.syntax.langs.cpp import CPP
from codevouch.syntax.langs.csharp import CSHARP
from codevouch.syntax.langs.go import GO
from codevouch.syntax.langs.java import JAVA
from codevouch.syntax.langs.javascript import JAVASCRIPT
from codevouch.syntax.langs.kotlin import KOTLIN
from codevouch.syntax.langs.python import PYTHON
from codevouch.syntax.langs.rust import RUST
from codevouch.syntax.langs.swift import SWIFT
from codevouch.syntax.langs.typescript import TSX, TYPESCRIPT
from codevouch.syntax.spec import Language

LANGUAGES: tuple[Language, ...] = (
    PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA,
    C, CPP, CSHARP, KOTLIN, SWIFT,
)


@clearable
@cache
def by_name() -> Mapping[str, Language]:
    """Language name -> its record."""
    return {lang.name: lang for lang in LANGUAGES}


@clearable
@cache
def by_extension() -> Mapping[str, Language]:
    """Lower-case extension with its dot -> the language that parses it."""
    out: dict[str, Language] = {}
    for lang in LANGUAGES:
        for ext in lang.extensions:
            out.setdefault(ext, lang)   # a shared extension (`.h`) is the first's: see of_path
    return out


def of_path(path: str, text: str | None = None) -> Language | None:
    """The language of `path` by its extension, None when codevouch does not parse it. For an
    extension two languages share (`.h`), the one whose `claims` the file's `text` matches
    (C++ for a header that declares a class, a namespace or a template), else the first."""
    ext = os.path.splitext(path)[1].lower()
    first = by_extension().get(ext)
    if first is None or text is None:
        return first
    return next((lang for lang in _claimants().get(ext, ()) if lang.claims is not None and lang.claims.search(text)),
                first)


@clearable
@cache
def _claimants() -> Mapping[str, tuple[Language, ...]]:
    """Extension -> the languages after the first that may claim a file of it (spec.Language.claims)."""
    out: dict[str, tuple[Language, ...]] = {}
    for lang in LANGUAGES:
        for ext in lang.extensions:
            if lang.claims is not None and by_extension()[ext] is not lang:
                out[ext] = (*out.get(ext, ()), lang)
    return out


@clearable
@cache
def names() -> frozenset[str]:
    return frozenset(by_name())


@clearable
@cache
def keywordless() -> frozenset[str]:
    """Languages where a definition may open with no keyword (spec.Language.keywordless)."""
    return frozenset(lang.name for lang in LANGUAGES if lang.keywordless)


@clearable
@cache
def keywords() -> frozenset[str]:
    """Every word that opens a definition in some language."""
    return frozenset(word for lang in LANGUAGES for word in lang.keywords)


@clearable
@cache
def fences(but: str) -> frozenset[str]:
    """The fence tags of every language except `but`."""
    return frozenset(tag for lang in LANGUAGES if lang.name != but for tag in lang.fences)


@clearable
@cache
def declaration_suffixes() -> tuple[str, ...]:
    """File-name suffixes of declaration files (stubs, headers), in every language."""
    return tuple(suffix for lang in LANGUAGES for suffix in lang.declarations)


@clearable
@cache
def relative_specifier_extensions() -> frozenset[str]:
    """Extensions, without the dot, of the languages whose imports name files relatively."""
    return frozenset(ext[1:] for lang in LANGUAGES if lang.relative_specifiers for ext in lang.extensions)


@clearable
@cache
def directory_stems() -> frozenset[str]:
    """File stems that name their directory in a module path, in every language."""
    return frozenset(stem for lang in LANGUAGES for stem in lang.directory_stems)
