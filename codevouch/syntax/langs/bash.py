"""Shell: `f() {...}` and `function f {...}`; `.sh` and `.bash` files, and a file with no
extension whose `#!` line names a shell (registry.of_file)."""
from __future__ import annotations

import re

from codevouch.syntax.spec import LEAF, Imports, Language, LanguageSpec

BASH = Language(
    name="bash",
    grammar=("tree_sitter_bash", "language"),
    extensions={".sh": "bash", ".bash": "bash"},
    syntax=LanguageSpec(
        definitions={"function_definition": LEAF},
        blocks=frozenset({"program", "compound_statement", "subshell", "if_statement", "do_group",
                          "case_item"}),
    ),
    keywordless=True,       # `deploy() {` has no keyword
    keywords=("function",),
    fences=("bash", "sh", "shell", "zsh"),
    interpreters=("sh", "bash", "dash", "ksh", "zsh"),
    # `source lib/common.sh`, `. ./env.sh`: a path with no expansion (`$HOME/x`) and not absolute.
    imports=Imports(re.compile(r"""[ \t]*(?:source|\.)[ \t]+["']?(?P<file>[^\s"'$`/;&|][^\s"'$`;&|]*)["']?[ \t]*(?:[;&|#]|$)""")),
)
