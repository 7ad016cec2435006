"""The quality figure's acronym queries (bench/codevouch_bench/lib/acronyms.py): built from a module's
own docstrings, each sentence with an acronym asked again without it. No model, no network."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.acronyms import acronym_queries
from codevouch_bench.lib.docstrings import strip_python

SOURCE = '''
def send(req):
    """Send an HTTP request and return its response."""


def adapter(req):
    """Creates a URL adapter (for the given request) when one is bound."""


def parse(raw):
    """Read a JSON document from the wire, as UTF-8 bytes."""


def render(node):
    """The `HTTP` constant and JSX.Element are code, not acronyms here."""


def one(x):
    """Return the ID of the given object, always."""


def two(x):
    """Return the ID of the given object, always."""


def shout(x):
    """SEE ALSO THE DOCS"""


def short(x):
    """An API for HTTP JSON."""


def plain(x):
    """Return the thing that was asked for."""
'''


def test_acronym_queries_come_from_docstrings_with_a_twin_without_the_acronym() -> None:
    _, targets = strip_python(SOURCE, "pkg/mod.py")
    found = {q.target.qualname: q for q in acronym_queries(targets)}
    # `one` and `two` share their sentence: it describes no one definition. `render` has its
    # all-caps words only as code; `shout` is all capitals; `short` keeps too few words without
    # them; `plain` has none.
    assert sorted(found) == ["adapter", "parse", "send"]
    assert found["send"].acronyms == ("HTTP",)
    assert found["send"].without.query == "Send an request and return its response."
    assert found["adapter"].without.query == "Creates a adapter (for the given request) when one is bound."
    assert found["parse"].acronyms == ("JSON", "UTF-8")
    assert found["parse"].without.query == "Read a document from the wire, as bytes."
    # The twin asks for the same definition: only the query differs.
    send = found["send"]
    assert (send.without.path, send.without.qualname, send.without.start_line) == \
        (send.target.path, send.target.qualname, send.target.start_line)
    assert send.target.query == "Send an HTTP request and return its response."


def test_whole_quality_section_reports_stub_share_and_acronyms_per_repository(tmp_path: Path) -> None:
    import json

    from codevouch_bench.lib.whole_quality_report import section

    def sc(mrr: float) -> dict[str, float]:
        return {"queries": 40, "mrr@10": mrr}

    corpus = {"corpus": "attrs", "language": "python", "chunks": {"codevouch": 900}, "queries": 40,
              "scores": {"overlap": {"codevouch": sc(0.5), "codevouch-source-only": sc(0.55), "bm25": sc(0.2),
                                     "langchain-1000": sc(0.4)}},
              "docstring_misses": {"misses": 20, "lost_to_a_stub": 5},
              "identifiers": {"name": {"codevouch": {"queries": 150, "recall@1": 0.99}},
                              "words": {"codevouch": {"queries": 120, "recall@1": 0.95}}},
              "definition_name_tags": {"name": {"tagged": 150, "not_a_definition": 2},
                                       "words": {"tagged": 90, "not_a_definition": 0}},
              "acronyms": {"queries": 7, "found": {"HTTP": 5, "URL": 2}, "examples": [["An HTTP call.", "An call."]],
                           "scores": {"with": {"codevouch": sc(0.3), "codevouch-source-only": sc(0.35)},
                                      "without": {"codevouch": sc(0.6), "codevouch-source-only": sc(0.65)}}}}
    paired = {"queries": 40, "better": 1, "worse": 4, "mrr@10_difference": -0.05, "interval_95": [-0.1, 0.0]}
    bare = {**corpus, "corpus": "none", "acronyms": {"queries": 0, "found": {}, "examples": [], "scores": {}},
            "default_vs_source_only": paired}
    path = tmp_path / "stubs.json"
    path.write_text(json.dumps({"runs": [{"sampling": "whole repositories", "commit": "abc",
                                          "per_corpus": [corpus, bare]}],
                                "notes": ["A note."]}))
    text = section(path)
    # a run from before the paired interval shows – in its column
    assert "| attrs | python | 900 | 40 | **0.5** | 0.55 | – | 0.4 (langchain-1000) | x1.25 | 5 of 20 (25%) |" in text
    assert "| none | python | 900 | 40 | **0.5** | 0.55 | -0.050 [-0.100, +0.000]; 1 / 4 | 0.4 (langchain-1000) |" in text
    assert "| attrs | 150 | 0.99 | 120 | 0.95 | 2 of 150 | 0 of 90 |" in text
    assert "| attrs | 7 | 0.3 / 0.6 | 0.35 / 0.65 | – | HTTP 5, URL 2 |" in text
    assert "| none | 0 | – | – | – | – |" in text
    assert "A note." in text
    assert section(tmp_path / "absent.json") == ""
