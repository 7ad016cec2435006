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
import re
from collections.abc import Mapping
from functools import cache

from codevouch.caches import clearable
from codevouch.syntax.langs.bash import BASH
from codevouch.syntax.langs.c import C
from codevouch.syntax.langs.cpp import CPP
from codevouch.syntax.langs.csharp import CSHARP
from codevouch.syntax.langs.go import GO
from codevouch.syntax.langs.java import JAVA
from codevouch.syntax.langs.javascript import JAVASCRIPT
from codevouch.syntax.langs.kotlin import KOTLIN
from codevouch.syntax.langs.lua import LUA
from codevouch.syntax.langs.php import PHP
from codevouch.syntax.langs.python import PYTHON
from codevouch.syntax.langs.ruby import RUBY
from codevouch.syntax.langs.rust import RUST
from codevouch.syntax.langs.scala import SCALA
from codevouch.syntax.langs.swift import SWIFT
from codevouch.syntax.langs.typescript import TSX, TYPESCRIPT
from codevouch.syntax.spec import Language

LANGUAGES: tuple[Language, ...] = (
    PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA,
    C, CPP, CSHARP, KOTLIN, SWIFT,
    RUBY, PHP, SCALA, BASH, LUA,
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


@clearable
@cache
def by_file_name() -> Mapping[str, Language]:
    """Exact file name (`Rakefile`) -> the language that parses it (spec.Language.file_names)."""
    return {name: lang for lang in LANGUAGES for name in lang.file_names}


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
def by_interpreter() -> Mapping[str, Language]:
    """Program a `#!` line names (`bash`) -> the language (spec.Language.interpreters)."""
    return {program: lang for lang in LANGUAGES for program in lang.interpreters}


def of_path(path: str) -> Language | None:
    """The language of `path` by its extension, else by its exact file name (`Rakefile`); None
    when codevouch does not parse it, or only knows it from its text (`of_file`)."""
    name = path.rsplit("/", 1)[-1]
    stem, ext = os.path.splitext(name)
    return by_extension().get(ext.lower()) if ext and stem else by_file_name().get(name)


# `#!/bin/sh`, `#!/usr/bin/env bash`, `#!/usr/bin/env -S bash -e`: the program the line runs.
_SHEBANG = re.compile(r"#![ \t]*(?:\S*/)?([^/\s]+)(?:[ \t]+(?:-\S+[ \t]+)*([^/\s-]\S*))?")


def of_file(path: str, text: str | None) -> Language | None:
    """`of_path`, and for a file with no extension and no known name, the language its first
    line's `#!` names (`#!/usr/bin/env bash`): only the first line is read, so detection stays as
    cheap as the extension's. `text` None: by the path alone."""
    lang = of_path(path)
    if lang is not None and text is not None:
        # An extension two languages share (`.h`): the later one whose `claims` the text matches
        # (C++ for a header that declares a class, a namespace or a template), else the first.
        ext = os.path.splitext(path)[1].lower()
        return next((c for c in _claimants().get(ext, ()) if c.claims is not None and c.claims.search(text)), lang)
    if lang is not None or text is None or not text.startswith("#!"):
        return lang
    name = path.rsplit("/", 1)[-1]
    if os.path.splitext(name)[1] and os.path.splitext(name)[0]:
        return None     # a file with an extension is what its extension says
    found = _SHEBANG.match(text[:200].split("\n", 1)[0])
    if found is None:
        return None
    program = found.group(2) if found.group(1) == "env" and found.group(2) else found.group(1)
    return by_interpreter().get(program)


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
