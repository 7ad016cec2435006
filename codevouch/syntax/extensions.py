"""File extension -> language, in one table: the tag a markdown code fence gives the language
(what a reader's highlighter knows) and the tree-sitter grammar codevouch parses it with, if
any. The languages codevouch parses bring their own extensions (syntax/registry.py); the rest
are named here for their fence tag only. No tree-sitter here: rendering a citation's code block
needs only the tag."""
from __future__ import annotations

from collections.abc import Mapping

from codevouch.syntax import registry

# Extension (lower-case, with dot) -> fence tag, for files codevouch does not parse.
_TAG_ONLY: Mapping[str, str] = {
    ".sql": "sql", ".md": "markdown", ".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
    ".html": "html", ".css": "css", ".xml": "xml",
}

# Extension -> a code fence's language tag (validator/render.py).
FENCE_TAG_BY_EXTENSION: Mapping[str, str] = {
    **_TAG_ONLY, **{ext: tag for ext, lang in registry.by_extension().items() for tag in (lang.extensions[ext],)}}


def is_declaration_file(path: str) -> bool:
    """A file that declares what another file implements (a TypeScript declaration, a Python
    stub): a name defined in both is asked for as its implementation (retriever/search.py
    ranks it first)."""
    return path.lower().endswith(registry.declaration_suffixes())
