"""The names a code file is reached by from outside it: its package and module path (pure).

People and agents qualify a definition by where it lives: `chi.URLParam` (Go's package clause),
`flask.Flask` or `flask.app.Flask` (Python's package path), `crate::routing::Router` (a Rust
module path), `utils.strings.pad` (a TypeScript module path). `qualifies` says whether such a
qualifier names a file, so search and check-refs resolve it through the repository's own names
rather than by guessing.
"""
from __future__ import annotations

import re
from functools import lru_cache

from codevouch.caches import clearable
from codevouch.syntax import registry

# What a Rust path starts with when it means "from here", not a module's name.
_RELATIVE = frozenset({"crate", "self", "super"})


def module_parts(path: str) -> tuple[str, ...]:
    """The file's module path, lower case: its directories and stem (`src/flask/app.py` ->
    src, flask, app; `pkg/__init__.py` -> pkg; `types/index.d.ts` -> types)."""
    parts = path.replace("\\", "/").split("/")
    stem = parts[-1]
    lowered = stem.lower()
    # A declaration's whole suffix goes (`index.d.ts` is `index`), not only its last extension.
    cut = next((len(s) for s in registry.declaration_suffixes() if lowered.endswith(s)), 0)
    stem = stem[:-cut] if cut else stem.rsplit(".", 1)[0] if "." in stem else stem
    out = [p for p in parts[:-1] if p]
    if stem.lower() not in registry.directory_stems():     # `__init__`, Rust's `mod`, `index`
        out.append(stem)
    return tuple(p.lower() for p in out)


def has_package_clause(path: str) -> bool:
    """Whether files like `path` declare their package in their text (Go's `package chi`)."""
    lang = registry.of_path(path)
    return lang is not None and lang.package_clause is not None


def declared_package(path: str, text: str) -> str | None:
    """The package `text`, the file at `path`, declares (`package chi` -> "chi"), lower case;
    None when its language has no package clause or the text has none."""
    lang = registry.of_path(path)
    found = lang.package_clause.search(text) if lang is not None and lang.package_clause is not None else None
    return found.group(1).lower() if found else None


def qualifier_parts(qualifier: str) -> tuple[str, ...]:
    """A written qualifier as components, lower case: `crate::routing` -> routing, `pkg.sub` -> pkg, sub."""
    parts = [p for p in re.split(r"\.|::|/", qualifier.lower()) if p]
    while parts and parts[0] in _RELATIVE:
        parts.pop(0)
    return tuple(parts)


def qualifies(qualifier: str, path: str, text: str | None = None) -> bool:
    """`qualifier` names the file at `path`: it is the package the file declares (Go's, read from `text`), or a
    run of its module path's components (`flask` and `flask.app` for src/flask/app.py). A Rust
    `crate::` or `self::` alone qualifies any file of the crate."""
    want = qualifier_parts(qualifier)
    if not want:
        return bool(re.match(r"\s*(crate|self|super)\b", qualifier.lower()))
    if text is not None and want == (declared_package(path, text),):
        return True
    return _run_of(want, module_parts(path))


@clearable
@lru_cache(maxsize=4096)
def _run_of(want: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    n = len(want)
    return any(parts[i:i + n] == want for i in range(len(parts) - n + 1))
