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

# A file stem that names its directory rather than itself: Python's package file, Rust's module
# and crate roots, a TypeScript/JavaScript directory's index.
_DIRECTORY_STEMS = frozenset({"__init__", "__main__", "mod", "lib", "main", "index"})
# What a Rust path starts with when it means "from here", not a module's name.
_RELATIVE = frozenset({"crate", "self", "super"})
_GO_PACKAGE = re.compile(r"^[ \t]*package[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
_STUBS = (".d.ts", ".d.mts", ".d.cts")


def module_parts(path: str) -> tuple[str, ...]:
    """The file's module path, lower case: its directories and stem (`src/flask/app.py` ->
    src, flask, app; `pkg/__init__.py` -> pkg; `types/index.d.ts` -> types)."""
    parts = path.replace("\\", "/").split("/")
    stem = parts[-1]
    lowered = stem.lower()
    cut = next((len(s) for s in _STUBS if lowered.endswith(s)), 0)
    stem = stem[:-cut] if cut else stem.rsplit(".", 1)[0] if "." in stem else stem
    out = [p for p in parts[:-1] if p]
    if stem.lower() not in _DIRECTORY_STEMS:
        out.append(stem)
    return tuple(p.lower() for p in out)


def go_package(text: str) -> str | None:
    """A Go file's package clause (`package chi` -> "chi"), or None."""
    found = _GO_PACKAGE.search(text)
    return found.group(1).lower() if found else None


def qualifier_parts(qualifier: str) -> tuple[str, ...]:
    """A written qualifier as components, lower case: `crate::routing` -> routing, `pkg.sub` -> pkg, sub."""
    parts = [p for p in re.split(r"\.|::|/", qualifier.lower()) if p]
    while parts and parts[0] in _RELATIVE:
        parts.pop(0)
    return tuple(parts)


def qualifies(qualifier: str, path: str, text: str | None = None) -> bool:
    """`qualifier` names the file at `path`: it is the file's Go package (read from `text`), or a
    run of its module path's components (`flask` and `flask.app` for src/flask/app.py). A Rust
    `crate::` or `self::` alone qualifies any file of the crate."""
    want = qualifier_parts(qualifier)
    if not want:
        return bool(re.match(r"\s*(crate|self|super)\b", qualifier.lower()))
    if path.lower().endswith(".go") and text is not None and want == (go_package(text),):
        return True
    return _run_of(want, module_parts(path))


@clearable
@lru_cache(maxsize=4096)
def _run_of(want: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    n = len(want)
    return any(parts[i:i + n] == want for i in range(len(parts) - n + 1))
