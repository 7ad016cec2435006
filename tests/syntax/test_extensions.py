"""One extension table (codevouch/syntax/extensions.py) for parsing and for code fences."""
from __future__ import annotations

from codevouch.syntax import registry
from codevouch.syntax.extensions import FENCE_TAG_BY_EXTENSION
from codevouch.syntax.languages import detect_language
from codevouch.validator.render import code_block, language


def test_every_parsed_extension_has_a_grammar_and_a_fence_tag() -> None:
    assert {lang.name for lang in registry.by_extension().values()} == registry.names()
    assert set(registry.by_extension()) < set(FENCE_TAG_BY_EXTENSION)


def test_fence_tags_and_grammars_differ_where_a_highlighter_knows_more() -> None:
    assert (detect_language("ui/App.jsx"), language("ui/App.jsx")) == ("javascript", "jsx")
    assert (detect_language("db/q.SQL"), language("db/q.SQL")) == (None, "sql")
    assert (detect_language("Makefile"), language("Makefile")) == (None, "")
    assert code_block("a.py", "x = '```'") == "````python\nx = '```'\n````"
