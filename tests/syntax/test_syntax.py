"""Tests for the shared syntax layer (codevouch.syntax) and who may import what.

The chunker's use of it is covered in test_chunker.py, with the definitions of its samples.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from codevouch.indexer.chunker import chunk_text
from codevouch.syntax import MODULE_SYMBOL, split_lines
from codevouch.syntax.definitions import find_definitions


def test_split_lines_numbers_lines_like_tree_sitter() -> None:
    assert split_lines("a\r\nb\n") == ["a\r", "b", ""]
    assert MODULE_SYMBOL == "<module>"


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return set(out.stdout.split())


@pytest.mark.process
def test_validator_does_not_import_the_indexer() -> None:
    loaded = _modules_after("import codevouch.validator, codevouch.validator.symbols")
    assert "codevouch.validator.symbols" in loaded
    assert not any(m.startswith("codevouch.indexer") for m in loaded)


@pytest.mark.process
def test_importing_the_syntax_package_loads_no_grammar() -> None:
    loaded = _modules_after("import codevouch.syntax")
    assert "codevouch.syntax.lines" in loaded
    assert not any(m.startswith(("tree_sitter", "codevouch.syntax.tree")) for m in loaded)


# --- nested definitions, in all six languages ---------------------------------------------

NESTED = {
    "a.py": ("def outer():\n    # helper\n    @dec\n    def inner():\n        class Local:\n"
             "            def m(self):\n                pass\n        return Local\n    return inner\n\n"
             "class C:\n    def method(self):\n        def inner():\n            pass\n        return inner\n",
             {"outer": [(1, 9)], "outer.inner": [(2, 8)], "outer.inner.Local": [(5, 7)],
              "outer.inner.Local.m": [(6, 7)], "C": [(11, 15)], "C.method": [(12, 15)],
              "C.method.inner": [(13, 14)]}),
    "a.js": ("function outer() {\n  function inner() {}\n  const arrow = () => 1;\n"
             "  class Local {\n    m() {}\n  }\n  items.map(x => x);\n}\n"
             "class C { method() { const helper = function() {}; } }\n",
             {"outer": [(1, 8)], "outer.inner": [(2, 2)], "outer.arrow": [(3, 3)], "outer.Local": [(4, 6)],
              "outer.Local.m": [(5, 5)], "C": [(9, 9)], "C.method": [(9, 9)], "C.method.helper": [(9, 9)]}),
    "a.ts": ("export function outer(): void {\n  // why\n  function inner(): number { return 1 }\n"
             "  const arrow = (): number => 1;\n}\n",
             {"outer": [(1, 5)], "outer.inner": [(2, 3)], "outer.arrow": [(4, 4)]}),
    "a.tsx": ("export function App() {\n  const onClick = () => {};\n  function Inner() { return <div/>; }\n"
              "  return <div onClick={onClick}/>;\n}\n",
              {"App": [(1, 5)], "App.onClick": [(2, 2)], "App.Inner": [(3, 3)]}),
    "a.go": ("package m\n\nfunc Outer() {\n\tinner := func() int { return 1 }\n\ttype local struct{}\n\t_ = inner\n}\n\n"
             "func (s *Server) Start() {\n\tstop := func() {}\n\tx, y := 1, 2\n\t_, _, _ = stop, x, y\n}\n",
             {"Outer": [(3, 7)], "Outer.inner": [(4, 4)], "Outer.local": [(5, 5)], "Server.Start": [(9, 13)],
              "Server.Start.stop": [(10, 10)]}),
    "A.java": ("class A {\n  void run() {\n    class Local {\n      void m() {}\n    }\n"
               "    Runnable r = new Runnable() { public void run() {} };\n  }\n}\n",
               {"A": [(1, 8)], "A.run": [(2, 7)], "A.run.Local": [(3, 5)], "A.run.Local.m": [(4, 4)]}),
    "a.rs": ("fn outer() {\n    fn helper() {}\n    impl Foo {\n        fn z() {}\n    }\n}\n\n"
             "impl Server {\n    fn start(&self) {\n        fn inner() {}\n    }\n}\n",
             {"outer": [(1, 6)], "outer.helper": [(2, 2)], "outer.Foo": [(3, 5)], "outer.Foo.z": [(4, 4)],
              "Server": [(8, 12)], "Server.start": [(9, 11)], "Server.start.inner": [(10, 10)]}),
}


@pytest.mark.parametrize("path", sorted(NESTED))
def test_nested_definitions_are_qualified_by_every_definition_around_them(path: str) -> None:
    text, expected = NESTED[path]
    assert find_definitions(text, path) == expected


MEMBER_FUNCTIONS = ("options._root = (vnode, parentDom) => {\n  return vnode;\n};\n"
                    "Suspense.prototype._childDidSuspend = function (promise) {\n  return promise;\n};\n"
                    "module.exports = function () {};\nexports.render = function render() {};\n"
                    "this.x = function () {};\na[0].y = function () {};\nobj.count = 3;\nx = function () {};\n"
                    "function outer() {\n  Helper.prototype.run = () => 1;\n}\n")


@pytest.mark.parametrize("path", ["a.js", "a.ts"])
def test_a_function_assigned_to_a_member_is_a_definition(path: str) -> None:
    """JavaScript defines many functions by assignment: `Obj.name = function`, on a prototype
    (named without `prototype`), on `exports`. Not a value that is no function, nor an object
    that is not a chain of plain names, nor `module.exports` itself."""
    assert find_definitions(MEMBER_FUNCTIONS, path) == {
        "options._root": [(1, 3)], "Suspense._childDidSuspend": [(4, 6)], "exports.render": [(8, 8)],
        "outer": [(13, 15)], "outer.Helper.run": [(14, 14)]}
    chunks, _ = chunk_text(MEMBER_FUNCTIONS, path, lambda s: len(s.split()) + 2, budget=250, merge_target=0)
    assert {"options._root", "Suspense._childDidSuspend", "exports.render", "outer"} <= {c.symbol for c in chunks}


def test_top_level_names_stay_the_chunkers() -> None:
    # Nested definitions are added; the names of chunks (top level, container members) do not move.
    text, _ = NESTED["a.py"]
    chunks, _ = chunk_text(text, "a.py", lambda s: len(s.split()) + 2, budget=250, merge_target=0)
    assert [c.symbol for c in chunks] == ["outer", "C"]


# --- the top-level block around some lines --------------------------------------------------

def test_top_level_region_takes_the_block_with_its_decorators_and_comments() -> None:
    from codevouch.syntax.region import top_level_region
    lines = ["import os", "", "# about f", "@dec", "def f():", "    x = 1", "# a column-0 comment",
             "    return x", "", "# about g", "def g():", "    pass", "", "class K {", "  m() {}", "}", "x = 1"]
    assert top_level_region(lines, 5, 5) == (2, 7)       # inside f: from its comment to its end
    assert top_level_region(lines, 7, 7) == (2, 7)
    assert top_level_region(lines, 11, 11) == (9, 11)    # g: the next block's comment is g's
    assert top_level_region(lines, 14, 14) == (13, 15)   # a closing brace at column 0 stays
    assert top_level_region(lines, 0, 0) == (0, 0)


def test_region_context_names_every_row_that_decided_the_block() -> None:
    from codevouch.syntax.region import region_context
    lines = ["import os", "", "# about f", "@dec", "def f():", "    x = 1", "# a column-0 comment",
             "    return x", "", "# about g", "def g():", "    pass"]
    # f's block is rows 2-7; the cut looked from row 1 (not attached) to row 10 (g starts).
    assert region_context(lines, 5, 5) == (2, 7, 1, 11)
    # g's block runs to the end of the file, so its context does too; f's block starts the file here.
    assert region_context(lines, 11, 11) == (9, 11, 8, 12)
    assert region_context(lines[2:], 3, 3) == (0, 5, 0, 9)


def test_a_piece_that_does_not_parse_cleanly_gives_no_definitions() -> None:
    from codevouch.syntax.definitions import find_clean_definitions
    assert find_clean_definitions("def f():\n    return 1\n", "a.py") == {"f": [(1, 2)]}
    assert find_clean_definitions("    return 1\ndef f(:\n", "a.py") is None
    assert find_clean_definitions("x = 1\n", "a.py") == {}
