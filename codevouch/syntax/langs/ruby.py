"""Ruby: modules and classes as containers (`class Billing::Invoice` is `Billing.Invoice`), `def
self.build` named `build` in its class, `class << self` read through; `Rakefile` and `Gemfile`
by their names."""
from __future__ import annotations

import re

from codevouch.syntax.spec import LEAF, DefRule, Imports, Language, LanguageSpec

_SCOPE = DefRule(container=True, name="path")

RUBY = Language(
    name="ruby",
    grammar=("tree_sitter_ruby", "language"),
    extensions={".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby"},
    syntax=LanguageSpec(
        definitions={
            "module": _SCOPE,
            "class": _SCOPE,
            "method": LEAF,
            "singleton_method": LEAF,   # def self.build
        },
        transparent=frozenset({"singleton_class"}),    # class << self ... end
        blocks=frozenset({"program", "body_statement", "begin_block", "do_block", "block"}),
    ),
    keywordless=True,       # `def self.build`: the word after `def` is `self`, not the name
    keywords=("def", "class", "module"),
    fences=("ruby", "rb"),
    file_names=("Rakefile", "Gemfile"),
    imports=Imports(
        re.compile(r"""[ \t]*(?:require_relative[ \t(]*["'](?P<here>[^"'\n]+)["']"""
                   r"""|(?:require|load)[ \t(]*["'](?P<file>[^"'\n]+)["'])"""),
        suffixes=(".rb",)),
)
