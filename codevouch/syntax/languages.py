"""Language detection and lazy tree-sitter grammar loading.

Grammars come only from the per-language ``tree-sitter-*`` wheels installed
in the environment (never downloaded).  Everything the chunker and the definition
finder need to know about a language is plain data in its module of syntax/langs/,
listed by syntax/registry.py: supporting another language means one module there and one
line in the registry (plus its grammar wheel in pyproject.toml).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from functools import cache

import tree_sitter

from codevouch import caches
from codevouch.syntax import registry
from codevouch.syntax.spec import LanguageSpec

__all__ = [
    "detect_language",
    "get_language",
    "get_parser",
    "get_spec",
    "unavailable",
]

def detect_language(path: str, text: str | None = None) -> str | None:
    """Language name for a file by its extension or name, or by `text` (registry.of_file: the
    `#!` line of a file with neither, C++ for a `.h` whose text uses C++); None if unsupported."""
    lang = registry.of_file(path, text)
    return None if lang is None else lang.name


def get_spec(name: str) -> LanguageSpec:
    """Syntax tables for a supported language (KeyError otherwise)."""
    return registry.by_name()[name].syntax


@caches.clearable
@cache
def get_language(name: str) -> tree_sitter.Language:
    """The tree-sitter Language for ``name``; loaded once from its wheel."""
    try:
        module_name, func_name = registry.by_name()[name].grammar
    except KeyError:
        raise ValueError(f"unsupported language: {name!r}") from None
    try:
        loader: Callable[[], object] = getattr(importlib.import_module(module_name), func_name)
        return tree_sitter.Language(loader())
    except Exception as err:  # noqa: BLE001 - a wheel missing or broken: that language is read as text
        _unavailable[name] = f"{module_name}: {type(err).__name__}: {err}"[:300]
        raise


# Languages whose grammar failed to load in this process -> why: their files are cut into text
# windows (indexer/chunker.py), and a build's summary says so (BranchSummary.text_only).
_unavailable: dict[str, str] = {}


def unavailable() -> dict[str, str]:
    """Each language whose grammar failed to load in this process, and why (a copy)."""
    return dict(_unavailable)


caches.register("codevouch.syntax.languages.unavailable", _unavailable.clear, _unavailable.__len__)


# Parsers hold mutable state, so each thread gets its own cached set. Clearing (caches.py) moves
# to a new generation: every thread's set is made anew on its next use.
_parsers = threading.local()
_generation = [0]


def get_parser(name: str) -> tree_sitter.Parser:
    """A cached tree-sitter Parser for ``name`` (one per thread)."""
    cache = _thread_parsers()
    if cache is None:
        cache = _parsers.cache = {}
        _parsers.generation = _generation[0]
    parser = cache.get(name)
    if parser is None:
        parser = cache[name] = tree_sitter.Parser(get_language(name))
    return parser


def _thread_parsers() -> dict[str, tree_sitter.Parser] | None:
    cache: dict[str, tree_sitter.Parser] | None = getattr(_parsers, "cache", None)
    return cache if cache is not None and getattr(_parsers, "generation", None) == _generation[0] else None


def _clear_parsers() -> None:
    _generation[0] += 1
    _parsers.cache = None


caches.register("codevouch.syntax.languages.get_parser", _clear_parsers, lambda: len(_thread_parsers() or ()))
