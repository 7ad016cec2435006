"""Tests for the shared syntax layer (codevouch.syntax) and who may import what.

The chunker's use of it is covered in test_chunker.py; definitions are tested there too.
"""
from __future__ import annotations

import subprocess
import sys

from codevouch.syntax import MODULE_SYMBOL, split_lines


def test_split_lines_numbers_lines_like_tree_sitter() -> None:
    assert split_lines("a\r\nb\n") == ["a\r", "b", ""]
    assert MODULE_SYMBOL == "<module>"


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return set(out.stdout.split())


def test_validator_does_not_import_the_indexer() -> None:
    loaded = _modules_after("import codevouch.validator, codevouch.validator.symbols")
    assert "codevouch.validator.symbols" in loaded
    assert not any(m.startswith("codevouch.indexer") for m in loaded)


def test_importing_the_syntax_package_loads_no_grammar() -> None:
    loaded = _modules_after("import codevouch.syntax")
    assert "codevouch.syntax.lines" in loaded
    assert not any(m.startswith(("tree_sitter", "codevouch.syntax.tree")) for m in loaded)
