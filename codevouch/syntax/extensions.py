"""File extension -> language, in one table: the tag a markdown code fence gives the language
(what a reader's highlighter knows) and the tree-sitter grammar codevouch parses it with, if
any. No tree-sitter here: rendering a citation's code block needs only the tag."""
from __future__ import annotations

from collections.abc import Mapping

# Extension (lower-case, with dot) -> (fence tag, grammar or None). JSX has a tag of its own,
# and the JavaScript grammar parses it.
_BY_EXTENSION: Mapping[str, tuple[str, str | None]] = {
    ".py": ("python", "python"), ".pyi": ("python", "python"),
    ".js": ("javascript", "javascript"), ".mjs": ("javascript", "javascript"),
    ".cjs": ("javascript", "javascript"), ".jsx": ("jsx", "javascript"),
    ".ts": ("typescript", "typescript"), ".mts": ("typescript", "typescript"),
    ".cts": ("typescript", "typescript"), ".tsx": ("tsx", "tsx"),
    ".go": ("go", "go"), ".rs": ("rust", "rust"), ".java": ("java", "java"),
    ".kt": ("kotlin", None), ".c": ("c", None), ".h": ("c", None), ".cc": ("cpp", None),
    ".cpp": ("cpp", None), ".hpp": ("cpp", None), ".cs": ("csharp", None), ".rb": ("ruby", None),
    ".php": ("php", None), ".swift": ("swift", None), ".scala": ("scala", None),
    ".sh": ("bash", None), ".bash": ("bash", None), ".sql": ("sql", None),
    ".md": ("markdown", None), ".json": ("json", None), ".toml": ("toml", None),
    ".yaml": ("yaml", None), ".yml": ("yaml", None), ".html": ("html", None), ".css": ("css", None),
    ".xml": ("xml", None),
}

# Extension -> the grammar's language name (syntax/languages.py loads it), for the files codevouch parses.
LANGUAGE_BY_EXTENSION: Mapping[str, str] = {ext: grammar for ext, (_, grammar) in _BY_EXTENSION.items()
                                            if grammar is not None}
# Extension -> a code fence's language tag (validator/render.py).
FENCE_TAG_BY_EXTENSION: Mapping[str, str] = {ext: tag for ext, (tag, _) in _BY_EXTENSION.items()}

# Files that declare what another file implements: TypeScript declarations and Python stubs. A
# name defined in both is asked for as its implementation (retriever/search.py ranks it first).
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", ".pyi")


def is_declaration_file(path: str) -> bool:
    return path.lower().endswith(DECLARATION_SUFFIXES)
