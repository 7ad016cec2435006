"""Python: `.py` and `.pyi` stubs."""
from __future__ import annotations

from codevouch.syntax.spec import CONTAINER, LEAF, Language, LanguageSpec

PYTHON = Language(
    name="python",
    grammar=("tree_sitter_python", "language"),
    extensions={".py": "python", ".pyi": "python"},
    syntax=LanguageSpec(
        definitions={
            "class_definition": CONTAINER,
            "function_definition": LEAF,
        },
        wrappers=frozenset({"decorated_definition"}),
        blocks=frozenset({"module", "block"}),
    ),
    keywords=("def", "class"),
    fences=("python", "py"),
    declarations=(".pyi",),
    directory_stems=("__init__", "__main__"),
)
