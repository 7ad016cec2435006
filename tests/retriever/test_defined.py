"""The name tier takes a name only from a parsed definition in a code file: a comment, a
commented-out definition, a JSON string or a changelog line is words; an acronym in a sentence
is a word; a qualified name resolves through the repository's package names.

Real git repositories, real tree-sitter, a real tantivy copy and Chroma store; the fake
embedder, so the dense half is noise and what is asserted is the name tier.
"""
from __future__ import annotations

import json
from pathlib import Path

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.retriever import defined
from codevouch.retriever.query import Qualified, Query
from codevouch.store import ChunkRecord
from tests.clihelp import cv
from tests.gitrepo import Repo

DEF = "definition-name"

ROUTER = {
    "go.mod": "module github.com/x/chi\n\ngo 1.20\n",
    "mux.go": "package chi\n\n// Mux is a simple HTTP route multiplexer.\ntype Mux struct {\n\thandler Handler\n}\n\n"
              "// NewMux returns a newly initialized Mux object.\nfunc NewMux() *Mux {\n\treturn &Mux{}\n}\n",
    "context.go": "package chi\n\n// URLParam returns the url parameter from a http.Request object.\n"
                  "func URLParam(r *http.Request, key string) string {\n\treturn RouteContext(r.Context()).URLParam(key)\n}\n",
    "mux_test.go": "package chi\n\nfunc TestMuxBasic(t *testing.T) {\n\t// func Mux() {\n\t// \treturn Mux{}\n\t// }\n"
                   "\tm := NewMux()\n\t_ = m\n}\n",
    "CHANGELOG.md": "# Changelog\n\n## v5\n\n- func Mux is now a struct; type Mux replaces the old one\n",
    "middleware/recoverer.go": "package middleware\n\n// Recoverer is a middleware that recovers from panics.\n"
                               "func Recoverer(next http.Handler) http.Handler {\n\treturn next\n}\n",
    "_examples/routes.json": json.dumps({"routes": [{"handler": "func Recoverer", "name": "Recoverer",
                                                     "type": "Recoverer"}]}) + "\n",
}


def _index(repo: Repo, index_dir: Path, files: dict[str, str]) -> Index:
    repo.commit_files(files)
    idx = Index(repo.root, index_dir, embedder=FakeEmbedder())
    idx.build()
    return idx


def test_mentions_comments_and_data_are_never_definitions(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir, ROUTER)
    for query, home in (("Mux", "mux.go"), ("Recoverer", "middleware/recoverer.go")):
        for mode in ("hybrid", "lexical"):
            hits = idx.search(query, k=6, mode=mode, validate=False)
            assert hits[0].path == home and hits[0].matched[0] == DEF, (query, mode, hits[0].path)
            # The test's commented-out `func Mux()`, the changelog's "func Mux", the JSON's
            # "func Recoverer": words (on main each was tagged definition-name).
            tagged = [h.path for h in hits if DEF in h.matched]
            assert tagged == [home], (query, mode, tagged)


def test_an_acronym_in_a_sentence_is_a_word(repo: Repo, index_dir: Path) -> None:
    # A dozen definitions whose code says http in a definition-like place (`func(http.Handler)`),
    # as a router's middleware does, and the one the sentence describes.
    middleware = {
        f"middleware/{name.lower()}.go": f"package middleware\n\n// {name} sets up {name.lower()} on a handler.\n"
        f"func {name}(next http.Handler) func(http.Handler) http.Handler {{\n"
        f"\treturn func(http.Handler) http.Handler {{ return next }}\n}}\n"
        for name in ("SetHeader", "Heartbeat", "AllowContentType", "Logger", "Throttle", "Timeout",
                     "RealIP", "RequestID", "NoCache", "Compress", "StripSlashes", "CleanPath")
    }
    files = {**middleware, "go.mod": "module github.com/x/chi\n",
             "chi.go": "package chi\n\n// RegisterMethod adds support for a custom method to the router.\n"
                       "func RegisterMethod(method string) {\n\tmethods[method] = len(methods)\n}\n"}
    idx = _index(repo, index_dir, files)
    hits = idx.search("register a custom HTTP method", k=5, validate=False)
    assert "chi.go" in [h.path for h in hits[:3]], [h.path for h in hits]
    assert all(DEF not in h.matched for h in hits), [(h.path, h.matched) for h in hits]
    # The acronym alone, or written as code, is a name; none of those chunks defines `HTTP`.
    assert all(DEF not in h.matched for h in idx.search("HTTP", k=5, validate=False))
    assert idx.search("RegisterMethod", k=1, validate=False)[0].matched[0] == DEF


def test_a_package_qualified_name_finds_its_definition(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir, {**ROUTER, "render/context.go": "package render\n\n"
                                   "// URLParam of a render context (another package's).\n"
                                   "func URLParam(key string) string {\n\treturn key\n}\n"})
    for query, home in (("chi.URLParam", "context.go"), ("render.URLParam", "render/context.go"),
                        ("middleware.Recoverer", "middleware/recoverer.go"),
                        ("chi.URLParam key", "context.go")):
        hits = idx.search(query, k=5, validate=False)
        assert hits[0].path == home and hits[0].matched[0] == DEF, (query, [(h.path, h.matched) for h in hits])
        assert [h.path for h in hits if DEF in h.matched] == [home], query
    # A qualifier that names no package of the repository resolves nothing.
    assert all(DEF not in h.matched for h in idx.search("nosuch.URLParam", k=5, validate=False))


def test_check_refs_resolves_a_package_qualified_name(repo: Repo, tmp_path: Path) -> None:
    repo.commit_files({**ROUTER, "src/routing/mod.rs": "pub struct Router {}\n"})
    answer = tmp_path / "answer.md"
    answer.write_text("Read it with `chi.URLParam`; route with `crate::routing::Router`; not `chi.Recoverer`.\n")
    out = cv("check-refs", str(answer), "--repo", str(repo.root), "--json")
    results = {r["symbol"]: r for r in json.loads(out.stdout)["references"] if r.get("symbol")}
    assert results["chi.URLParam"]["reason"] == "symbol-defined", results["chi.URLParam"]
    assert results["chi.URLParam"]["found"] == "context.go#L3-L6"
    assert results["crate.routing.Router"]["reason"] == "symbol-defined"
    assert results["chi.Recoverer"]["reason"] != "symbol-defined"


def _rec(path: str, symbol: str, start: int, end: int, blob: str = "b1") -> ChunkRecord:
    return ChunkRecord(id=f"{path}:{start}", repo="", path=path, branch="main", commit="", commit_date="",
                       symbol=symbol, start_line=start, end_line=end, indexed_at="", blob_sha=blob, text_hash="h",
                       kind="source", language="", status="live")


def test_confirmed_keeps_parsed_definitions_in_the_chunks_lines() -> None:
    text = b"class Response:\n    def raise_for_status(self):\n        # def hidden(): commented\n        return 1\n"
    recs = {r.id: r for r in (_rec("web/models.py", "Response", 1, 4), _rec("NOTES.md", "<module>", 1, 4, "b2"),
                              _rec("web/models.py", "Response", 3, 4))}
    read = {"b1": text, "b2": b"def raise_for_status():\n"}

    def blobs(shas: list[str]) -> dict[str, bytes]:
        return {s: read[s] for s in shas}
    ids = list(recs)
    assert defined.confirmed(ids, recs, Query("raise_for_status", ("raise_for_status",)), blobs) == ["web/models.py:1"]
    assert defined.confirmed(ids, recs, Query("hidden", ("hidden",)), blobs) == []
    assert defined.confirmed(ids, recs, Query("Response", ("response",)), blobs) == ["web/models.py:1", "web/models.py:3"]
    qualified = Query("models.Response", ("models.response",), (Qualified("models", "response"),))
    assert defined.confirmed(ids, recs, qualified, blobs) == ["web/models.py:1"]
    # A module's function, not every method of that name in the module.
    method = Query("models.raise_for_status", ("models.raise_for_status",), (Qualified("models", "raise_for_status"),))
    assert defined.confirmed(ids, recs, method, blobs) == []
    assert defined.confirmed(ids, recs, Query("web.Response", ("web.response",), (Qualified("nope", "response"),)),
                             blobs) == []


def test_the_working_tree_overlay_is_confirmed_by_its_syntax_too(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir, ROUTER)
    # Uncommitted: a real definition, and a test that only mentions one in a comment.
    repo.write("coupon.go", "package chi\n\n// ApplyCoupon takes a coupon off an order.\n"
                            "func ApplyCoupon(order *Order, code string) {\n\torder.Total -= 1\n}\n")
    repo.write("coupon_test.go", "package chi\n\nfunc TestCoupon(t *testing.T) {\n\t// func ApplyCoupon() {}\n"
                                 "\t// func ApplyCoupon() {}\n\tApplyCoupon(nil, \"x\")\n}\n")
    hits = idx.search("ApplyCoupon", k=5)
    assert hits[0].path == "coupon.go" and hits[0].matched[0] == DEF, [(h.path, h.matched) for h in hits]
    assert [h.path for h in hits if DEF in h.matched] == ["coupon.go"]


def test_module_paths_qualify_in_python_rust_and_typescript(repo: Repo, index_dir: Path) -> None:
    idx = _index(repo, index_dir, {
        "src/flask/app.py": 'class Flask:\n    """The application object."""\n\n    def run(self):\n        return 1\n',
        "tests/app.py": 'class Flask:\n    """A stand-in application for the tests."""\n',
        "src/routing/mod.rs": "pub struct Router {\n    routes: Vec<Route>,\n}\n",
        "src/other.rs": "pub struct Router {\n    inner: u8,\n}\n",
        "web/utils/strings.ts": "export function pad(text: string, width: number): string {\n  return text;\n}\n",
        "web/utils/numbers.ts": "export function pad(n: number): string {\n  return String(n);\n}\n",
    })
    for query, home in (("flask.Flask", "src/flask/app.py"), ("flask.app.Flask", "src/flask/app.py"),
                        ("crate::routing::Router", "src/routing/mod.rs"), ("strings.pad", "web/utils/strings.ts"),
                        ("utils.numbers.pad", "web/utils/numbers.ts")):
        hits = idx.search(query, k=5, validate=False)
        assert [h.path for h in hits if DEF in h.matched] == [home], (query, [(h.path, h.matched) for h in hits])
        assert hits[0].path == home, query


# Two free `getPath`: the router's body says "url" at every line, the utility's never does.
PLACES = {
    "src/utils/url.ts": "export const getPath = (request: Request): string => {\n"
                        "  const start = request.path.indexOf('/', 8)\n  return request.path.slice(start)\n}\n",
    "src/router/match.ts": "export const getPath = (url: URL): string => {\n  const href = url.href\n"
                           "  const base = url.origin + url.host\n"
                           "  return url.pathname + url.search + href.slice(base.length)\n}\n",
}


def test_several_definitions_of_a_name_rank_the_one_whose_place_the_query_names_first(repo: Repo,
                                                                                       index_dir: Path) -> None:
    """`url getPath`: the query's other word names the utility's file, not the words of the
    router's body; `router getPath` the router's; the name alone ranks by the rest, as before."""
    repo.commit_files(PLACES)
    idx = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False)
    idx.build()

    def first(query: str) -> str:
        return idx.search(query, k=2, validate=False)[0].path
    assert first("url getPath") == "src/utils/url.ts"
    assert first("getPath in utils") == "src/utils/url.ts"
    assert first("router getPath") == "src/router/match.ts"
    assert first("match getPath") == "src/router/match.ts"


def test_the_other_words_are_those_of_no_name_the_definition_matched() -> None:
    from codevouch.retriever.query import read
    from codevouch.retriever.settings import DEFAULT

    def other(query: str, matched: set[str]) -> set[str]:
        return set(defined.other_words(read(query, "hybrid", DEFAULT), frozenset(matched)))
    assert other("url getPath", {"getpath", "~getpath"}) == {"url"}
    assert other("getPath in utils", {"getpath"}) == {"utils"}
    assert other("ProgressBar", {"progressbar"}) == set()
    assert other("processor getPath", {"getpath"}) == {"processor"}
    assert other("raise for status", {"~raiseforstatus"}) == set()     # one name's words, all of them
