"""Fast checks of the benchmark harness's own logic (bench/codevouch_bench): no model, no network.

The figures are only as good as their ground truth and scoring, so those are pinned here on
hand-made inputs; the end-to-end run is `python -m codevouch_bench --quick`.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from codevouch_bench.lib import corpus
from codevouch_bench.lib.docstrings import Target, first_sentence, strip_python
from codevouch_bench.lib.retrieval import (
    BM25Index,
    Span,
    code_tokens,
    langchain_chunks,
    line_windows,
    rank_of,
    scores,
    symbol_hit,
    window_hit,
)
from codevouch_bench.lib.tooldefs import definitions
from codevouch_bench.lib.truth import NewRelease, chunk_class, file_fates

SOURCE = '''"""Module doc."""
import os


def only_doc(x):
    """Return the thing that was asked for, always."""


class Box:
    """A box."""

    @property
    def size(self):
        """Compute the size of the box from its parts.

        More text here.
        """
        return 3

    def short(self):
        """Too short."""
        return 1
'''


def test_strip_python_keeps_lines_and_finds_targets() -> None:
    out, targets = strip_python(SOURCE, "m.py")
    assert out.count("\n") == SOURCE.count("\n")
    ast.parse(out)
    assert '"""' not in out
    assert {t.qualname for t in targets} == {"only_doc", "Box.size"}  # "Too short." has < 4 words
    size = next(t for t in targets if t.qualname == "Box.size")
    lines = out.split("\n")
    assert lines[size.def_line - 1].strip() == "def size(self):"
    assert lines[size.start_line - 1].strip() == "@property"
    assert lines[size.end_line - 1].strip() == "return 3"
    assert size.query == "Compute the size of the box from its parts."


def test_first_sentence() -> None:
    assert first_sentence("Do a thing. Then more.\n\nParams") == "Do a thing."
    assert first_sentence("Wrapped\n   over lines e.g. this\n\nNext") == "Wrapped over lines e.g. this"


def test_langchain_chunks_map_to_their_lines() -> None:
    text = "\n".join(f"def f{i}(a, b):\n    return a + b + {i}\n" for i in range(400))
    spans = langchain_chunks("x.py", text)
    lines = text.split("\n")
    assert len(spans) > 1
    for span in spans:
        assert "\n".join(lines[span.start_line - 1:span.end_line]).strip() == span.text.strip()


def test_windows_and_matching_rules() -> None:
    text = "\n".join(f"line {i}" for i in range(100))
    wins = line_windows("a.py", text)
    assert [(w.start_line, w.end_line) for w in wins] == [(1, 40), (41, 80), (81, 100)]
    t = Target("q", "a.py", "Box.size", 45, 50, 46)
    assert window_hit(wins[1], t) and not window_hit(wins[0], t)
    assert symbol_hit(Span("a.py", 40, 47, "", "Box.size"), t)
    assert symbol_hit(Span("a.py", 40, 47, "", "other, size"), t)        # merged names, last component
    assert not symbol_hit(Span("a.py", 40, 47, "", "Box"), t)            # the class header is not the method
    assert not symbol_hit(Span("b.py", 40, 47, "", "Box.size"), t)
    assert rank_of([wins[0], wins[1]], t, window_hit) == 2
    assert scores([1, None, 2, 11 if False else None]) == {
        "queries": 4, "mrr@10": 0.375, "recall@1": 0.25, "recall@5": 0.5, "recall@10": 0.5}


def test_bm25_splits_identifiers() -> None:
    assert code_tokens("getAppConfig(read_file)") == ["get", "app", "config", "read", "file"]
    idx = BM25Index([Span("a.py", 1, 2, "def read_config_file(path): ..."), Span("b.py", 1, 2, "def add(a, b)")])
    assert idx.search("Read the config file")[0].path == "a.py"


OLD = "def keep():\n    return 1\n\n\ndef change():\n    return 2\n\n\ndef gone():\n    return 3\n"
NEW = "def keep():\n    return 1\n\n\ndef change():\n    return 20\n"


def test_ground_truth_classes(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    corpus.init_repo(repo)
    corpus.replace_tree(repo, {"m.py": OLD.encode(), "same.py": b"x = 1\n", "old_name.py": b"y = 2\n" * 20,
                               "dead.py": b"z = 3\n"})
    old = corpus.commit_all(repo, "N")
    corpus.replace_tree(repo, {"m.py": NEW.encode(), "same.py": b"x = 1\n", "new_name.py": b"y = 2\n" * 20})
    new = corpus.commit_all(repo, "N+1")
    fates = file_fates(repo, old, new, ["m.py", "same.py", "old_name.py", "dead.py"])
    assert fates["same.py"].status == "unchanged"
    assert fates["dead.py"].status == "deleted"
    assert (fates["old_name.py"].status, fates["old_name.py"].new_path, fates["old_name.py"].identical) == \
        ("renamed", "new_name.py", True)
    m = fates["m.py"]
    assert chunk_class("m.py", "keep", 1, 2, m, OLD, NEW) == "function-identical"
    assert chunk_class("m.py", "change", 5, 6, m, OLD, NEW) == "function-changed"
    assert chunk_class("m.py", "gone", 9, 10, m, OLD, NEW) == "function-removed"
    assert chunk_class("m.py", "change", 5, 5, m, OLD, NEW) == "function-changed-chunk-intact"
    assert chunk_class("m.py", "<module>", 9, 10, m, OLD, NEW) == "other-code-changed"
    assert chunk_class("same.py", "<module>", 1, 1, fates["same.py"], "x = 1\n", None) == "unchanged-file"


LONG = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(12))


def test_ground_truth_for_renames_judges_an_edited_rename_at_its_new_path(tmp_path: Path) -> None:
    """A rename with identical content (the same blob id, git's fact) is the same code, fresh
    truth. A rename that edited one function is judged at the new path as a modified file is:
    the edited function is stale, its unchanged neighbour fresh (as function-moved-to-file
    would call it, moved alone), and the validator's verdicts fall in the expected sets."""
    from codevouch_bench.lib.truth import EXPECTED, FRESH_TRUTH, STALE_TRUTH

    from codevouch.validator import validate

    other = LONG.replace("x + ", "x - ")
    edited = other.replace("x - 11", "x - 111")
    repo = tmp_path / "r"
    corpus.init_repo(repo)
    corpus.replace_tree(repo, {"a.py": LONG.encode(), "b.py": other.encode()})
    old = corpus.commit_all(repo, "N")
    corpus.replace_tree(repo, {"a_moved.py": LONG.encode(), "pkg/b_moved.py": edited.encode()})
    new = corpus.commit_all(repo, "N+1")
    fates = file_fates(repo, old, new, ["a.py", "b.py"])
    assert (fates["a.py"].new_path, fates["a.py"].identical) == ("a_moved.py", True)
    assert (fates["b.py"].status, fates["b.py"].new_path, fates["b.py"].identical) == \
        ("renamed", "pkg/b_moved.py", False)
    release = NewRelease(repo, new, ["a_moved.py", "pkg/b_moved.py"])
    snippets = [("a.py", "f0", 1, 2, LONG, None), ("b.py", "f0", 1, 2, other, edited),
                ("b.py", "f11", 45, 46, other, edited)]
    classes = [chunk_class(p, s, a, b, fates[p], text, new_text, release) for p, s, a, b, text, new_text in snippets]
    assert classes == ["file-renamed-identical", "function-identical", "function-changed"]
    assert classes[0] in FRESH_TRUTH and classes[1] in FRESH_TRUTH and classes[2] in STALE_TRUTH
    items = [{"path": p, "commit": old, "start_line": a, "end_line": b, "symbol": s,
              "text": "\n".join(text.split("\n")[a - 1:b])} for p, s, a, b, text, _ in snippets]
    results = validate(repo, items)
    assert [r.verdict for r in results] == ["stale-but-ok", "stale-but-ok", "historical-only"]
    assert all(r.verdict in EXPECTED[c] for r, c in zip(results, classes))


@pytest.mark.parametrize("spec", ["click==8.0.0", "stdlib:json"])
def test_source_labels(spec: str) -> None:
    assert corpus.Source(spec).label == spec


NESTED_PY = ("import os\n\n\ndef outer():\n    @dec\n    def inner():\n        return 1\n    return inner\n\n\n"
             "class C:\n    def m(self):\n        class Local:\n            pass\n        return Local\n")
NESTED_RS = ("struct S;\n\nimpl S {\n    #[inline]\n    fn new() -> Self {\n        fn helper() {}\n        S\n    }\n}\n")


def test_benchmark_parsers_list_nested_definitions_with_other_tools_names() -> None:
    py = [(d.name, d.spelled, d.start, d.end, d.function) for d in definitions("a.py", NESTED_PY)]
    assert py == [("outer", "outer", 4, 8, True), ("outer.inner", "outer.<locals>.inner", 5, 7, True),
                  ("C", "C", 11, 15, False), ("C.m", "C.m", 12, 15, True),
                  ("C.m.Local", "C.m.<locals>.Local", 13, 14, False)]
    rs = [(d.name, d.spelled, d.start, d.end) for d in definitions("a.rs", NESTED_RS)]
    assert rs == [("S", "S", 1, 1), ("S", "S", 3, 9), ("S.new", "S::new", 4, 8), ("S.new.helper", "S::new::helper", 6, 6)]


def test_benchmark_walk_names_c_family_definitions_by_its_own_rules() -> None:
    cpp = ("namespace billing {\nclass Book {\n  int settle(int n);\n};\n// Settles.\n"
           "int Book::settle(int n) { return n; }\n}\n")
    assert [(d.name, d.start, d.end, d.function) for d in definitions("src/book.cc", cpp)] == [
        ("billing", 1, 7, False), ("billing.Book", 2, 4, False), ("billing.Book.settle", 5, 6, True)]
    kt = "class Book {\n    fun settle(): Int = 1\n    companion object {\n        fun make() = Book()\n    }\n}\n"
    assert [d.name for d in definitions("Book.kt", kt)] == ["Book", "Book.settle", "Book.make"]
    swift = "struct Queue {}\nextension Queue {\n    func drain() {}\n}\n"
    assert [d.name for d in definitions("Queue.swift", swift)] == ["Queue", "Queue", "Queue.drain"]
    cs = "namespace Billing {\n  class Ledger {\n    void Settle() { }\n  }\n}\n"
    assert [d.name for d in definitions("Ledger.cs", cs)] == ["Ledger", "Ledger.Settle"]
    assert [d.name for d in definitions("ledger.h", "int settle(int n);\nstruct s { int a; };\n")] == ["s"]
    rb = ("module Billing\n  class Shop::Invoice\n    # Builds one.\n    def self.build\n    end\n\n"
          "    class << self\n      def open; end\n    end\n\n    def total\n      1\n    end\n  end\nend\n")
    assert [(d.name, d.start, d.end, d.function) for d in definitions("lib/invoice.rb", rb)] == [
        ("Billing", 1, 15, False), ("Billing.Shop.Invoice", 2, 14, False), ("Billing.Shop.Invoice.build", 3, 5, True),
        ("Billing.Shop.Invoice.open", 8, 8, True), ("Billing.Shop.Invoice.total", 11, 13, True)]
    lua = "local M = {}\n-- Settles.\nfunction M.settle() end\nfunction M:total()\nend\ndo\n  local function audit() end\nend\n"
    assert [(d.name, d.start, d.end) for d in definitions("lua/ledger.lua", lua)] == [
        ("M.settle", 2, 3), ("M.total", 4, 5), ("audit", 7, 7)]
    php = ("<?php\nnamespace App\\Billing;\n/** Bills. */\n#[Final]\nclass Invoice {\n"
           "    public function total(): int { function tax() {} return 1; }\n}\nfunction helper() {}\n")
    assert [(d.name, d.start, d.end, d.function) for d in definitions("src/Invoice.php", php)] == [
        ("Invoice", 3, 7, False), ("Invoice.total", 6, 6, True), ("Invoice.tax", 6, 6, True), ("helper", 8, 8, True)]
    scala = ("package acme.billing\n// Bills.\n@deprecated\ncase class Invoice(n: Int) {\n"
             "  def total: Int = { def tax = 1; tax }\n}\nobject Invoice { def apply(): Invoice = Invoice(1) }\n"
             "package object billing { def f = 1 }\n")
    assert [(d.name, d.start, d.end) for d in definitions("src/Invoice.scala", scala)] == [
        ("Invoice", 2, 6), ("Invoice.total", 5, 5), ("Invoice.total.tax", 5, 5), ("Invoice", 7, 7),
        ("Invoice.apply", 7, 7), ("billing", 8, 8), ("billing.f", 8, 8)]
    # A body on the lines after `=`: the definition ends with it, not at the next one's comment.
    indented = "object Opt {\n  def name(x: String): Opt =\n    copy(x)\n  /** Keys. */\n  def key: Int = 1\n}\n"
    assert [(d.name, d.start, d.end) for d in definitions("Opt.scala", indented)] == [
        ("Opt", 1, 6), ("Opt.name", 2, 3), ("Opt.key", 4, 5)]
    sh = "#!/usr/bin/env bash\nsettle() {\n  audit() { :; }\n}\n# Totals.\nfunction total {\n  :\n}\n"
    assert [(d.name, d.start, d.end) for d in definitions("libexec/ledger", sh)] == [
        ("settle", 2, 4), ("audit", 3, 3), ("total", 5, 8)]
    assert [d.name for d in definitions("lib/ledger.bash", sh)] == ["settle", "audit", "total"]
    assert definitions("Makefile", "all:\n\ttrue\n") == [] and definitions("bin/run", "#!/usr/bin/env python\n") == []


def test_ground_truth_for_code_moved_to_another_file(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    corpus.init_repo(repo)
    corpus.replace_tree(repo, {"m.py": OLD.encode(), "n.py": NESTED_PY.encode()})
    old = corpus.commit_all(repo, "N")
    moved = NESTED_PY.replace("class C:", "class D:")
    corpus.replace_tree(repo, {"m.py": NEW.encode(), "util.py": b"def gone():\n    return 3\n", "n.py": moved.encode()})
    new = corpus.commit_all(repo, "N+1")
    fates = file_fates(repo, old, new, ["m.py", "n.py"])
    release = NewRelease(repo, new, ["m.py", "util.py", "n.py"])
    assert chunk_class("m.py", "gone", 9, 10, fates["m.py"], OLD, NEW, release) == "function-moved-to-file"
    assert chunk_class("n.py", "C.m", 12, 15, fates["n.py"], NESTED_PY, moved, release) == "function-moved-in-file"
    assert chunk_class("n.py", "outer.inner", 5, 7, fates["n.py"], NESTED_PY, moved, release) == "function-identical"


def test_doc_comments_stripped_and_targets_found_per_language() -> None:
    from codevouch_bench.lib.doccomments import strip_doc_comments

    cases = {
        "a.rs": ("/// Build the wheel for the given target now.\n#[inline]\nfn build(x: u8) -> u8 {\n    x\n}\n"
                 "impl<T> Foo<T> {\n    /// Return the number of things in it.\n    pub fn len(&self) -> usize { 0 }\n}\n",
                 {("build", 2, 3, 5), ("Foo.len", 8, 8, 8)}),
        "a.ts": ("/**\n * Add an option to the command line parser.\n * @param flags the flags\n */\n"
                 "export function add(flags: string): number;\nexport function add(flags: any) { return 1 }\n"
                 "class Command {\n  /** Register a callback for the named event. */\n  on(name) { return this }\n}\n",
                 {("add", 5, 6, 6), ("Command.on", 9, 9, 9)}),
        "a.go": ("package x\n\n// Execute runs the whole command tree for the args.\n"
                 "func (c *Command) Execute() error {\n\treturn nil\n}\n",
                 {("Command.Execute", 4, 4, 6)}),
    }
    for path, (src, expected) in cases.items():
        out, targets = strip_doc_comments(src, path)
        assert out.count("\n") == src.count("\n"), path
        assert "///" not in out and "/**" not in out and "// Execute" not in out, out
        assert {(t.qualname, t.start_line, t.def_line, t.end_line) for t in targets} == expected, path
    _, [go] = strip_doc_comments(cases["a.go"][0], "a.go")
    assert go.query == "runs the whole command tree for the args."  # Go's leading name would give it away


def test_sampling_is_deterministic_library_first_and_skips_binaries(tmp_path: Path) -> None:
    from codevouch_bench.quality import is_library_code, sample_files

    for i in range(30):
        (tmp_path / "pkg").mkdir(exist_ok=True)
        (tmp_path / "pkg" / f"m{i}.py").write_text("x = 1\n" * 50)
        (tmp_path / "docs").mkdir(exist_ok=True)
        (tmp_path / "docs" / f"d{i}.md").write_text("words\n" * 50)
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\0\0" * 10)
    picked = sample_files(tmp_path, 3000, seed=1)
    assert picked == sample_files(tmp_path, 3000, seed=1)
    assert sum(len(d) for d in picked.values()) <= 3000 and "logo.png" not in picked
    library = [p for p in picked if is_library_code(p)]
    assert library and sum(len(picked[p]) for p in library) <= 1500 + 300  # half the budget, first file aside
    assert any(p.startswith("docs/") for p in picked)
    assert not is_library_code("tests/test_x.py") and not is_library_code("src/a.test.ts")


def test_every_quality_row_is_a_settings_of_codevouch() -> None:
    """The quality figure's rows change codevouch's knobs by passing Settings (no module globals
    patched): each row's fields are real ones, the shipped row is the defaults, and the rows that
    change what is indexed are told apart by their build key."""
    from codevouch_bench.quality import BEFORE, BUILD_KNOBS, CODEVOUCH, TUNE, settings_of

    from codevouch.retriever.settings import Settings

    rows = {**CODEVOUCH, **TUNE}
    made = {name: settings_of(knobs) for name, (_, knobs) in rows.items()}
    assert made["codevouch"] == Settings() and settings_of(CODEVOUCH["codevouch-dense"][1]) == Settings()
    before = settings_of(BEFORE)
    assert (before.collapse, before.lexical_weight, before.lexical_pairs, before.embed_context) == (False, 1.0, None, None)
    assert set(before.kind_weights.values()) == {1.0}
    keys = {s.build_key() for s in made.values()}
    assert Settings().build_key() in keys and (190, "path-symbol") in keys and (None, None) in keys
    for name, (_, knobs) in rows.items():  # a row that leaves the build knobs alone shares the default index
        if not any(k in BUILD_KNOBS for k in knobs):
            assert made[name].build_key() == Settings().build_key(), name


def test_identifier_targets_are_names_defined_once_at_any_depth() -> None:
    """A name is a target only when no other definition anywhere has it: a JavaScript class, a
    class in a test's callback and a nested Python function count; a `.d.ts` stub's interface
    member does not (the implementation is the answer); `module.exports = function` names nothing."""
    from codevouch_bench.lib.identifiers import targets

    files = {
        "src/child.js": "export const Child = ({ items }) => {\n  return items;\n};\n\n"
                        "export function flushQueue(q) {\n  return q;\n}\n\n"
                        "export function renderTree(t) {\n  return t;\n}\n",
        "demo/redux.jsx": "class Child extends Component {\n  render() {\n    return 1;\n  }\n}\n",
        "test/queue.test.js": "describe('q', () => {\n  function flushQueue() {}\n});\n",
        "src/index.d.ts": "export interface Tree {\n  renderTree(t: Tree): Tree;\n}\n",
        "karma.conf.js": "module.exports = function (config) {\n  config.set({});\n};\n",
        "pkg/util.py": "def outer():\n    def retry_call():\n        pass\n\n\ndef retry_call():\n    pass\n\n\n"
                       "def backoff_delay():\n    pass\n",
    }
    names = {t.name for t in targets(files, sorted(files))}
    assert names == {"renderTree", "render", "outer", "backoff_delay"}, names


def test_quality_counts_stub_losses_and_definition_tags_by_its_own_parse() -> None:
    """A docstring miss whose rank-1 hit is a declaration file spelling the target's name is a
    stub loss, one whose rank-1 hit is another chunk of the target's file a loss to its own file;
    a `definition-name` hit is a definition only when the bench's own parse has a
    definition line inside it (a function inside `if WIN:` too)."""
    from types import SimpleNamespace

    from codevouch_bench.lib.docstrings import Target
    from codevouch_bench.lib.retrieval import Span
    from codevouch_bench.quality import TagCheck, stub_losses

    target = Target("send the request", "pkg/client.py", "Client.send", 10, 20, 10)
    stub = [Span("pkg/client.pyi", 1, 3, "    def send(self, request: Request) -> Response: ...")]
    other = [Span("pkg/other.py", 1, 3, "def close(): ...")]
    neighbour = [Span("pkg/client.py", 22, 30, "    def close(self): ...")]
    test = [Span("tests/test_client.py", 1, 9, "def test_send(): ...")]
    assert stub_losses([stub, other, other, neighbour, test], [target] * 5, [2, None, 1, 3, None]) == {
        "misses": 4, "lost_to_a_stub": 1, "lost_to_own_file": 1, "lost_to_a_test": 1}

    texts = {"a.py": "if WIN:\n    def getchar():\n        return 1\n", "CHANGELOG.md": "- def getchar now\n",
             "a.pyi": "import os\n\ndef getchar() -> int: ...\n"}   # a stub is Python: parsed as such

    def hit(path: str, start: int, end: int) -> SimpleNamespace:
        return SimpleNamespace(path=path, symbol="", matched=("definition-name",),
                               record=SimpleNamespace(start_line=start, end_line=end))
    check = TagCheck(texts)
    check.add("name", [[hit("a.py", 1, 3), hit("CHANGELOG.md", 1, 1)], [hit("a.py", 3, 3)],
                       [hit("a.pyi", 3, 3), hit("a.pyi", 1, 1)]])
    assert {k: v for k, v in check.counts["name"].items() if k != "examples"} == {"tagged": 5, "not_a_definition": 3}


def test_bench_branches_runs_end_to_end_with_the_fake_embedder(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """codevouch_bench.branches on a small real repository: branches chosen, built, measured."""
    import json
    import subprocess

    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "src")
    body = "".join(f'def f{i}(x):\n    """Return the value plus {i} for the caller."""\n    return x + {i}\n\n\n'
                   for i in range(20))
    base = repo.commit(**{"pkg/a.py": body, "pkg/b.py": body.replace("plus", "minus")})
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2001-01-01 00:00:00 +0000")  # older than COMMIT
    for n in range(3):
        repo.git("checkout", "-q", "-b", f"topic{n}", base)
        repo.commit(**{"pkg/a.py": body.replace(f"plus {n} ", f"plus {n} and more ")})
    repo.git("checkout", "-q", "-b", "later", base)
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2099-01-01 00:00:00 +0000")
    repo.commit(**{"pkg/c.py": "X = 1\n"})  # newer than COMMIT: not chosen
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    repo.git("checkout", "-q", "main")
    commit = repo.commit(**{"pkg/d.py": "Y = 2\n"})
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, "-m", "codevouch_bench.branches", str(repo.root), commit, "--branches", "3", "--fake",
                           "--work", str(tmp_path / "work"), "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    names = [n for n, _ in result["branches"]]
    assert names[0] == "main" and len(names) == 3 and set(names[1:]) <= {"src-topic0", "src-topic1", "src-topic2"}
    after = result["after"]
    assert set(after["raw"]["seconds"]) == set(names) and after["query_ms"]["n"] == 3 * len(result["queries"])
    assert after["storage_ratio"] >= 1.0 and after["mb_first"] > 0


def test_synthetic_index_with_repeated_texts_is_searchable(tmp_path: Path) -> None:
    """The search figure's store (codevouch_bench/lib/synthetic.py): chunks of equal text share one vector,
    as a build stores them, and the filled index answers a search."""
    from codevouch_bench.lib.synthetic import build_synthetic_index

    from codevouch.embedding import FakeEmbedder
    from codevouch.request import SearchRequest
    from codevouch.retriever.search import search
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "src")
    body = "def cancel_order(order):\n    return order.cancel()\n"
    repo.commit(**{"a.py": body, "b.py": body, "c.py": "def refund(p):\n    return p.refund()\n"})
    index = tmp_path / "index"
    assert build_synthetic_index(repo.root, index, 30, 1, embedder=FakeEmbedder.name, dim=FakeEmbedder.dim) == 30
    hits = search(repo.root, SearchRequest("cancel order", k=3), index, embedder=FakeEmbedder())
    assert hits[0].record.path in ("a.py", "b.py") and "order.cancel()" in hits[0].text


def test_embedding_cache_serves_a_search_that_embeds_its_query_on_a_worker_thread(tmp_path: Path) -> None:
    """codevouch's search embeds the query on a second thread: the quality figure's cache is
    opened on the main one (it raised sqlite3.ProgrammingError before)."""
    from concurrent.futures import ThreadPoolExecutor

    from codevouch_bench.lib.embcache import CachedEmbedder

    from codevouch.embedding import FakeEmbedder

    cache = CachedEmbedder(FakeEmbedder(), tmp_path / "embeddings.sqlite")
    with ThreadPoolExecutor(1) as pool:
        vec = pool.submit(cache.embed_query, "cancel an order").result()
        docs = pool.submit(cache.embed, ["def cancel(order): pass"]).result()
    # Stored as float32: read back, a vector equals the model's to float32 precision.
    assert vec == FakeEmbedder().embed_query("cancel an order")
    assert cache.embed_query("cancel an order") == pytest.approx(vec, rel=1e-6)
    assert cache.embed(["def cancel(order): pass"])[0] == pytest.approx(docs[0], rel=1e-6)
    assert cache.embedded == 1  # the second ask came from the cache


def test_bench_py_knows_every_figure_script() -> None:
    """The runner (python -m codevouch_bench) runs any figure module by name (--only NAME); a
    default run keeps the figures it always ran, plus drift (seconds)."""
    from codevouch_bench import runner as bench

    modules = {p.stem for p in bench.HERE.glob("*.py")} - {"__init__", "__main__", "runner", "make_old_index",
                                                          "measure_match", "measure_across"}
    assert set(bench.FIGURES) == modules
    assert bench.DEFAULT == ("build", "search", "quality", "freshness", "validate", "drift")
    out, work = Path("/tmp/out.json"), Path("/tmp/work")
    for name in ("build", "search", "quality", "freshness", "validate"):
        plan = bench.FIGURES[name].plan(True, True, out, work)
        assert isinstance(plan, bench.Run) and plan.args == ["--out", str(out), "--quick", "--fake"], name
    assert bench.FIGURES["drift"].plan(False, False, out, work).args == ["--json", str(out)]
    assert bench.FIGURES["overlay"].plan(True, True, out, work).args == ["--out", str(out), "--quick"]
    assert bench.FIGURES["gitpython"].plan(False, False, out, work).stdout == "text"


def test_bench_py_records_a_figure_it_cannot_run_as_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codevouch_bench import runner as bench

    monkeypatch.setitem(bench.FIGURES, "gitpython", bench.Figure("gitpython", False, bench._gitpython,
                                                                 needs="no_such_module_for_codevouch"))
    result = bench.run_figure("gitpython", quick=True, fake=True, results=tmp_path)
    assert result == {"figure": "gitpython",
                      "skipped": "it needs the 'no_such_module_for_codevouch' package, which is not installed"}


def test_bench_py_keeps_a_figures_printed_output(tmp_path: Path) -> None:
    """A figure that prints its results (codevouch_bench.gitpython) has them kept as lines, and the
    report shows them in a section of their own, which a results file without it lacks."""
    pytest.importorskip("git")
    from codevouch_bench import runner as bench
    from codevouch_bench.lib.report import render

    result = bench.run_figure("gitpython", quick=True, fake=True, results=tmp_path)
    assert result["output"][0].startswith("files ") and any("GitPython" in line for line in result["output"])
    from codevouch_bench.lib.common import machine

    rendered = render({"profile": "quick", "machine": machine(), "figures": {"gitpython": result}})
    assert "9. GitPython" in rendered and result["output"][0] in rendered
    assert "9. GitPython" not in render({"profile": "quick", "machine": machine(), "figures": {}})


def test_bench_validate_is_on_benchlib() -> None:
    """codevouch_bench.validate logs, times and describes the machine with the lib's helpers, and
    takes --out / --fake as every figure module does."""
    from codevouch_bench import validate as bench_validate
    from codevouch_bench.lib import common

    assert bench_validate.log is common.log and bench_validate.timed_cpu is common.timed_cpu
    assert bench_validate.machine is common.machine
    assert not hasattr(bench_validate, "machine_info") and not hasattr(bench_validate, "timed")
    args = bench_validate.parse_args(["--out", "/tmp/v.json", "--fake", "--quick"])
    assert args.json == Path("/tmp/v.json") and args.quick
    wall, cpu, value = common.timed_cpu(lambda: sum(range(1000)))
    assert value == 499500 and wall >= 0 and cpu >= 0
    assert {"cores_usable", "git", "platform", "cpu", "load_avg_1m_at_start"} <= set(common.machine())


def test_report_renders_a_figure_kept_from_an_older_results_schema() -> None:
    """A --only rerun keeps the other figures from the JSON; one written before a key existed (the
    quality figure's old per_source) is named as such instead of crashing the whole report."""
    from codevouch_bench.lib.common import machine
    from codevouch_bench.lib.report import render

    old_quality = {"figure": "quality", "per_source": [], "overall": {"held-out": {}}, "wall_seconds": 1.0}
    rendered = render({"profile": "quick", "machine": machine(), "figures": {"quality": old_quality}})
    assert "Recorded by an older version of the benchmark (no 'per_corpus'" in rendered
    assert "--only quality" in rendered


def test_window_truth_puts_back_stripped_blanks_to_the_line_edge() -> None:
    from codevouch_bench.lib.windows import occurs, stands_for
    old = "class A:\n    def send(self):\n        return 1  \n"
    s = stands_for(old, old.index("def send"), "def send(self):\n        return 1")
    assert (s.text, s.at_line_start, s.at_line_end) == ("    def send(self):\n        return 1  ", True, True)
    assert occurs(s, "# new\n" + old)                               # moved down: still current
    assert not occurs(s, old.replace("    def", "  def"))           # re-indented: changed
    assert not occurs(s, old.replace("return 1  ", "return 1 + x"))  # grown at the end: changed
    mid = stands_for(old, old.index("send"), "send(self)")          # cut mid-line: may sit anywhere
    assert not mid.at_line_start and occurs(mid, "x = send(self)\n")


def test_splitter_windows_are_scored_on_a_tiny_history(tmp_path: Path) -> None:
    pytest.importorskip("langchain_text_splitters")
    from codevouch_bench.lib import windows
    repo = tmp_path / "r"
    corpus.init_repo(repo)
    text = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(60))   # several windows
    corpus.replace_tree(repo, {"m.py": text.encode(), "gone.go": b"package m\n\nfunc F() int {\n\treturn 1\n}\n"})
    old = corpus.commit_all(repo, "N")
    corpus.replace_tree(repo, {"m.py": text.replace("return x + 59", "return x - 59").encode(),
                               "moved.go": b"package m\n\nfunc F() int {\n\treturn 1\n}\n" + b"\nfunc G() {}\n" * 9})
    corpus.commit_all(repo, "N+1")
    r = windows.score(repo, old)
    assert r["windows"] >= 2 and r["languages"] == {"PYTHON": r["windows"] - 1, "GO": 1}
    assert 0 < r["current"] < r["windows"] and (r["accuracy"], r["false_fresh"]) == (1.0, 0)
    assert r["text_only_in_another_file"] == {"historical-only: file-deleted": 1}


def test_every_splitter_cuts_placed_windows_judged_in_each_scene(tmp_path: Path) -> None:
    """The splitters figure: LangChain's two and LlamaIndex's two splitters cut a tiny release,
    every window placed at its offset, and each scene's working tree keeps them all current."""
    pytest.importorskip("llama_index.core")
    from codevouch_bench import splitters
    from codevouch_bench.lib import windows
    repo = tmp_path / "r"
    corpus.init_repo(repo)
    text = "".join(f'def f{i}(x):\n    """Doc {i}."""\n    return x + {i}\n\n\n' for i in range(40))
    corpus.replace_tree(repo, {"m.py": text.encode(), "g.go": b"package m\n\nfunc F() int {\n\treturn 1\n}\n"})
    old = corpus.commit_all(repo, "N")
    files = windows.files_at(repo, old)
    for name in windows.SPLITTERS:
        items = windows.cut(repo, old, files, name)
        assert items and all(files[i["path"]][i["start_index"]:].startswith(i["text"]) for i in items), name
        for scene in ("insert-above", "rename"):
            tree, made = splitters.scene_tree(repo, old, scene, tmp_path)
            r = windows.judge(tree, files, items, made)
            assert (r["accuracy"], r["false_fresh"], r["current"]) == (1.0, 0, r["windows"]), (name, scene)
    assert splitters.moved_name("src/a.py") == "src/a_moved.py"


def test_a_paired_comparison_counts_each_querys_side_and_brackets_the_difference() -> None:
    """Two methods on the same queries: which ranks each query better, the MRR@10 difference, and
    a resampled interval around it that holds it (and is one point when every query agrees)."""
    from codevouch_bench.lib.retrieval import paired

    out = paired([1, 2, None, 1], [1, 1, 3, 2])
    assert (out["better"], out["worse"]) == (1, 2)
    assert out["mrr@10_difference"] == round((0 - 0.5 - 1 / 3 + 0.5) / 4, 3)
    low, high = out["interval_95"]
    assert low <= out["mrr@10_difference"] <= high and low < high
    assert paired([1, 1], [2, 2])["interval_95"] == [0.5, 0.5]
    with pytest.raises(AssertionError):
        paired([1], [1, 2])


def test_a_render_keeps_the_house_passes_written_by_hand(tmp_path: Path) -> None:
    """The house passes' before-and-after timings are run by hand against two commits (no figure
    module reruns them): a render of the results must carry them, not drop them."""
    from codevouch_bench.lib import report
    from codevouch_bench.lib.common import machine

    rendered = report.render({"profile": "quick", "machine": machine(), "figures": {}})
    assert "## The house's fourth pass" in rendered and report.HOUSE.read_text() in rendered
    assert report.FRESHNESS_RENAMES.read_text() in rendered
    assert report.house_section(tmp_path / "absent.md") == ""


def test_hit_tokens_counts_each_form_of_the_same_hits(tmp_path: Path) -> None:
    """The tokens-per-hit figure: a hit's JSON now costs less than the form that carried its code
    three times, and the MCP text content less than its JSON did; its report renders the figure."""
    from codevouch_bench import hit_tokens
    from codevouch_bench.lib.hit_tokens_report import section

    from codevouch import Index
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    repo.commit_files({"shop/orders.py": "".join(f"def order_{i}(order):\n    return order.total + {i}\n\n\n"
                                                 for i in range(20))})
    Index(repo.root, tmp_path / "index", embedder="fake-bow-64").build()
    got = hit_tokens.measure(repo.root, tmp_path / "index", ("order_3", "the total of an order"), 5)
    per = got["tokens_per_hit"]
    assert got["hits"] >= 2 and set(per) == set(hit_tokens.forms([]))
    assert per["json_before"] > per["json"] > per["json_agent"] and per["mcp_text"] < per["mcp_text_before"] / 2
    (tmp_path / "out.json").write_text(__import__("json").dumps({"command": "c", **got}))
    assert "| MCP search's text content now: each hit written once |" in section(tmp_path / "out.json")


def test_names_scripting_finds_each_name_once_defined_and_renders(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The names figure for the scripting languages: its own walk takes names defined once (not
    `log_line`, defined twice), a search finds each first, and its report renders the figure."""
    import json

    from codevouch_bench import names_scripting
    from codevouch_bench.lib.names_scripting_report import section

    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "work" / "repo")
    commit = repo.commit_files({
        "lib/shop/order.rb": "module Shop\n  class Order\n    def cancel_order\n      helper\n    end\n\n"
                             "    def paid?\n      true\n    end\n  end\nend\n",
        "lib/shop/util.rb": "def helper\n  1\nend\n",
        "bin/release": "#!/usr/bin/env bash\nlog_line() { :; }\nship-release() {\n  log_line\n}\nlog_line() { echo; }\n",
    })
    monkeypatch.setenv("CODEVOUCH_BENCH_GIT_MIRRORS", str(tmp_path))
    files = {p: (repo.root / p).read_bytes() for p in ("lib/shop/order.rb", "lib/shop/util.rb", "bin/release")}
    assert sorted(n for n, *_ in names_scripting.targets(files, "ruby")) == ["Order", "Shop", "cancel_order", "helper", "paid?"]
    assert [n for n, *_ in names_scripting.targets(files, "bash")] == ["ship-release"]
    got = [names_scripting.measure(names_scripting.Corpus(lang, "work", commit, lang), tmp_path / lang, None)
           for lang in ("ruby", "bash")]
    assert [(r["targets"], r["rank1"]) for r in got] == [(5, 1.0), (1, 1.0)], got
    out = tmp_path / "out.json"
    out.write_text(json.dumps({"command": "c", "corpora": got, "targets": 6, "rank1": 1.0}))
    assert "**Held out, all corpora: 1.000 at rank 1 over 6 names.**" in section(out)


def test_navigate_measures_show_and_references_against_ast(tmp_path: Path) -> None:
    """The navigation figure on a small repository: show at rank 1 for every name, references
    against ast, four unseen edits answered currently; its report renders the figure."""
    import json

    from codevouch_bench import navigate
    from codevouch_bench.lib.navigate_report import section

    from codevouch import Index
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    files = {f"pkg/m{n}.py": f"def f{n}(x):\n    return x\n\n\ndef g{n}(y):\n    return f{n}(y) + 1\n" for n in range(4)}
    files["pkg/use.py"] = "from pkg.m0 import f0\n\n\nclass K:\n    def run(self, f1):\n        return f0(1)\n"
    repo.commit_files(files)
    idx = Index(repo.root, tmp_path / "index", embedder="fake-bow-64", record=False)
    idx.build()
    defs = navigate.definitions(repo.root, "pkg")
    assert ("pkg/use.py", "K.run", 5) in defs
    shown = navigate.measure_show(idx, repo.root, [("f0", {("pkg/m0.py", 1)}), ("K.run", {("pkg/use.py", 5)})])
    assert (shown["show_rank1"], shown["grep_rank1"]) == (2, 2)
    refs = navigate.measure_references(idx, repo.root, ["f0", "f1"])
    # f1 as a parameter name is no use of f1, by ast and by references alike.
    assert (refs["truth"], refs["recall"], refs["precision"]) == (4, 1.0, 1.0)
    edits = navigate.measure_edits(idx, repo.root, defs)
    assert edits["stale_or_wrong"] == 0, edits
    result = {"command": "c", "corpora": [{"corpus": "small", "show": shown, "references": refs, "after_edits": edits}]}
    (tmp_path / "out.json").write_text(json.dumps(result))
    assert "| small | 2/2 | 2/2 |" in section(tmp_path / "out.json")


def test_names_c_family_finds_each_name_once_defined_and_renders(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The names figure for the C family: its own walk reads a C function through its declarator
    chain and a typedef, a C++ method at its definition (not its declaration), no Swift extension;
    a search finds each first, and its report renders the figure."""
    import json

    from codevouch_bench import names_c_family
    from codevouch_bench.lib.names_c_family_report import section
    from codevouch_bench.names_scripting import Corpus, measure

    from tests.gitrepo import Repo

    c_files = {"src/ledger.c": "typedef struct ledger_entry { int amount; } LedgerEntry;\n\n"
                               "static LedgerEntry *ledger_find(int id)\n{\n    return 0;\n}\n"}
    others = {
        "db/book.h": "namespace billing {\nclass InvoiceBook {\n public:\n  int settle_batch(int n);\n};\n}\n",
        "db/book.cc": "#include \"db/book.h\"\nnamespace billing {\nint InvoiceBook::settle_batch(int n) {\n"
                      "  return n;\n}\n}\n",
        "Sources/Tally/Counter.swift": "struct Counter {\n    func tick() {}\n}\n\nextension Counter {\n"
                                       "    func reset() {}\n}\n",
    }
    data = {p: t.encode() for p, t in (c_files | others).items()}
    assert [(n, p) for n, p, *_ in names_c_family.targets(data, "cpp")] == [
        ("settle_batch", "db/book.cc"), ("InvoiceBook", "db/book.h")]
    assert sorted(n for n, *_ in names_c_family.targets(data, "swift")) == ["Counter", "reset", "tick"]
    repo = Repo(tmp_path / "work" / "repo")
    commit = repo.commit_files(dict(c_files))
    monkeypatch.setenv("CODEVOUCH_BENCH_GIT_MIRRORS", str(tmp_path))
    assert sorted(n for n, *_ in names_c_family.targets({p: data[p] for p in c_files}, "c")) == [
        "LedgerEntry", "ledger_entry", "ledger_find"]
    got = measure(Corpus("c", "work", commit, "c"), tmp_path / "c", None, find=names_c_family.targets)
    assert (got["targets"], got["at_1"]) == (3, 3), got
    out = tmp_path / "out.json"
    out.write_text(json.dumps({"command": "c", "sample": 300, "corpora": [got], "targets": 3, "rank1": 1.0}))
    assert "**Held out, all corpora: 1.000 at rank 1 over 3 names; at 0.99 or more: c.**" in section(out)


def test_across_names_come_from_pythons_parser_of_every_file() -> None:
    from codevouch_bench.measure_across import defined_names

    files = {"a.py": "class Response:\n    def raise_for_status(self):\n        async def inner(): pass\n",
             "b.py": "def broken(:\n", "notes.md": "def send(): pass\n", "c.py": "get = lambda: 1\ndef send(): pass\n"}
    assert defined_names(files) == {"Response", "raise_for_status", "inner", "send"}


def test_the_share_of_misses_lost_to_the_targets_own_file_is_pooled_and_rendered(tmp_path: Path) -> None:
    """A large module's neighbours: how many rank-1 losses go to another chunk of the target's own
    file, per repository and pooled over a split."""
    import json

    from codevouch_bench.lib.whole_quality_report import section
    from codevouch_bench.quality import pooled

    def corpus(misses: int, own: int) -> dict:
        return {"ranks": {"overlap": {"codevouch": [1]}}, "acronym_ranks": {"with": {}, "without": {}},
                "test_ranks": {}, "test_naming": [],
                "docstring_misses": {"misses": misses, "lost_to_a_stub": 0, "lost_to_own_file": own,
                                     "lost_to_a_test": 0}}
    pool = pooled([corpus(10, 4), corpus(30, 6)])
    assert pool["docstring_misses"] == {"misses": 40, "lost_to_a_stub": 0, "lost_to_own_file": 10, "lost_to_a_test": 0}
    per = {"corpus": "a", "language": "python", "chunks": {"codevouch": 10}, "queries": 20,
           "scores": {"overlap": {"codevouch": {"queries": 20, "mrr@10": 0.5}}},
           "docstring_misses": corpus(10, 4)["docstring_misses"],
           "identifiers": {"name": {"codevouch": {}}, "words": {"codevouch": {}}}}
    path = tmp_path / "stubs.json"
    path.write_text(json.dumps({"runs": [{"per_corpus": [per], "overall": {"held-out": {"pooled": pool}}}]}))
    text = section(path)
    assert "| 0 of 10 (0%) | 4 of 10 (40%) |" in text
    assert "lost to another chunk of the target's own file 10 of 40 (25%)" in text


def test_every_quality_corpus_names_the_source_files_its_splitter_baseline_loads() -> None:
    from codevouch_bench.lib.config import HELD_OUT, SOURCE_SUFFIXES, TUNING

    assert {c.language for c in (*HELD_OUT, *TUNING)} <= set(SOURCE_SUFFIXES)
    assert not any(".pyi" in s or ".md" in s for s in SOURCE_SUFFIXES.values())
