"""codevouch.syntax.languages: which grammar a path gets, and that every grammar loads offline."""
from __future__ import annotations

import threading

import pytest

from codevouch.syntax import registry
from codevouch.syntax.languages import detect_language, get_language, get_parser, get_spec


@pytest.mark.parametrize(("path", "language"), [
    ("src/app.py", "python"), ("stubs/x.pyi", "python"), ("a/B.PY", "python"),
    ("x.js", "javascript"), ("x.mjs", "javascript"), ("x.cjs", "javascript"), ("x.jsx", "javascript"),
    ("x.ts", "typescript"), ("x.mts", "typescript"), ("x.cts", "typescript"), ("x.tsx", "tsx"),
    ("main.go", "go"), ("lib.rs", "rust"), ("A.java", "java"),
    ("x.c", "c"), ("x.h", "c"), ("x.cc", "cpp"), ("x.CPP", "cpp"), ("x.cxx", "cpp"), ("x.hpp", "cpp"),
    ("x.hh", "cpp"), ("X.cs", "csharp"), ("X.kt", "kotlin"), ("build.gradle.kts", "kotlin"),
    ("X.swift", "swift"),
    ("a.rb", "ruby"), ("lib/tasks/db.rake", "ruby"), ("Rakefile", "ruby"), ("sub/Gemfile", "ruby"),
    ("x.php", "php"), ("A.scala", "scala"), ("build.sc", "scala"), ("run.sh", "bash"), ("x.BASH", "bash"),
    ("init.lua", "lua"),
])
def test_the_extension_decides_the_language_whatever_its_case(path: str, language: str) -> None:
    assert detect_language(path) == language


@pytest.mark.parametrize("path", ["README.md", "Makefile", "x.zig", "x.py.orig", ".py", "dir.py/file",
                                  "Rakefile.txt", "rakefile", "Gemfile.lock", "bin/deploy"])
def test_other_files_have_no_language(path: str) -> None:
    assert detect_language(path) is None


def test_every_supported_language_has_tables_and_a_grammar_that_parses() -> None:
    samples = {"python": "def f():\n    pass\n", "javascript": "function f() {}\n", "typescript": "let x: number = 1;\n",
               "tsx": "const a = <div/>;\n", "go": "package m\nfunc F() {}\n", "rust": "fn f() {}\n",
               "java": "class A {}\n",
               "c": "int f(void) { return 0; }\n", "cpp": "namespace a { class B {}; }\n",
               "csharp": "class A { void F() {} }\n", "kotlin": "fun f() {}\n", "swift": "func f() {}\n",
               "ruby": "def f; end\n", "php": "<?php function f() {}\n", "scala": "object A\n",
               "bash": "f() { :; }\n", "lua": "function f() end\n"}
    assert registry.names() == set(registry.by_name()) == set(samples)
    for name, code in samples.items():
        spec = get_spec(name)
        assert spec.definitions, name
        tree = get_parser(name).parse(code.encode())
        assert not tree.root_node.has_error, name
        assert get_language(name) is get_language(name)      # loaded once


@pytest.mark.parametrize(("text", "language"), [
    ("int settle(int n);\n", "c"),
    ('#ifdef __cplusplus\nextern "C" {\n#endif\nstruct point { int x; };\n', "c"),
    ("class InvoiceBook {\n public:\n  void settle();\n};\n", "cpp"),
    ("namespace billing {\nint settle(int n);\n}\n", "cpp"),
    ("template <typename T> T twice(T x);\n", "cpp"),
    ("struct Entry : Base { };\n", "cpp"),
    ("std::string name(void);\n", "cpp"),
])
def test_a_header_is_cpp_when_its_text_uses_cpp(text: str, language: str) -> None:
    assert detect_language("include/billing.h", text) == language
    assert detect_language("include/billing.h") == "c"        # without the text: the first


@pytest.mark.parametrize(("first_line", "language"), [
    ("#!/bin/sh", "bash"), ("#!/usr/bin/env bash", "bash"), ("#! /bin/bash -eu", "bash"),
    ("#!/usr/bin/env -S zsh -f", "bash"), ("#!/usr/bin/env python3", None), ("# no shebang", None),
])
def test_a_file_without_extension_is_read_by_its_shebang(first_line: str, language: str | None) -> None:
    text = first_line + "\ndeploy() {\n  echo hi\n}\n"
    assert detect_language("bin/deploy", text) == language
    assert detect_language("bin/deploy") is None            # by its path alone: not known
    assert detect_language("notes.txt", text) is None       # an extension decides, whatever the text


def test_unknown_languages_are_refused() -> None:
    with pytest.raises(KeyError):
        get_spec("cobol")
    with pytest.raises(ValueError, match="unsupported language"):
        get_language("cobol")


def test_each_thread_gets_its_own_parser() -> None:
    mine = get_parser("python")
    assert get_parser("python") is mine
    theirs: list[object] = []
    t = threading.Thread(target=lambda: theirs.append(get_parser("python")))
    t.start()
    t.join()
    assert theirs and theirs[0] is not mine
