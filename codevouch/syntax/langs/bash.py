"""Shell: `f() {...}` and `function f {...}`; `.sh`, `.bash` and `.bats` files, and a file with no
extension whose `#!` line names a shell (registry.of_file).

A bats file is shell with one more form, `@test "name" { ... }`, which bats rewrites into a
function before bash runs it. tree-sitter-bash reads it without an error, as a command `@test`
with its name and `{` as arguments, the body's statements at top level after it and the closing
`}` as one more command: a test is module code (`<module>`), chunked whole like any other lines,
and its helpers (`setup`, `teardown`, functions of its own) are named definitions."""
from __future__ import annotations

import re

from codevouch.syntax.spec import LEAF, Imports, Language, LanguageSpec

BASH = Language(
    name="bash",
    grammar=("tree_sitter_bash", "language"),
    extensions={".sh": "bash", ".bash": "bash", ".bats": "bash"},
    syntax=LanguageSpec(
        definitions={"function_definition": LEAF},
        blocks=frozenset({"program", "compound_statement", "subshell", "if_statement", "do_group",
                          "case_item"}),
    ),
    keywordless=True,       # `deploy() {` has no keyword
    keywords=("function",),
    fences=("bash", "sh", "shell", "zsh"),
    interpreters=("sh", "bash", "dash", "ksh", "zsh", "bats"),
    # `source lib/common.sh`, `. ./env.sh`: a path with no expansion (`$HOME/x`) and not absolute.
    imports=Imports(re.compile(r"""[ \t]*(?:source|\.)[ \t]+["']?(?P<file>[^\s"'$`/;&|][^\s"'$`;&|]*)["']?[ \t]*(?:[;&|#]|$)""")),
)
