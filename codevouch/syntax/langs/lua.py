"""Lua: `function M.f`, `function M:f` (both `M.f`) and `local function f`, also inside a top-level
`do ... end` block (which only scopes its locals)."""
from __future__ import annotations

import re

from codevouch.syntax.spec import DefRule, Imports, Language, LanguageSpec

LUA = Language(
    name="lua",
    grammar=("tree_sitter_lua", "language"),
    extensions={".lua": "lua"},
    syntax=LanguageSpec(
        definitions={"function_declaration": DefRule(name="path")},
        # `do ... end` at top level scopes its locals; the functions it declares are the file's.
        transparent=frozenset({"do_statement"}),
        blocks=frozenset({"chunk", "block"}),
    ),
    keywordless=True,       # `function M.f`: the word after `function` is the table, not the name
    keywords=("function",),
    fences=("lua",),
    # `require "billing.ledger"`, `local x = require("billing.ledger")`
    imports=Imports(re.compile(r"""(?:.*[=(,][ \t]*|[ \t]*)require[ \t(]*["'](?P<file>[\w.\-/]+)["']"""),
                    suffixes=(".lua", "/init.lua"), dotted=True),
)
