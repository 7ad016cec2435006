"""A declaration (`.pyi`, `.d.ts`) ranks after the implementation it declares for a sentence
too; a declaration with no implementation is the answer. Real git, tree-sitter, tantivy and
Chroma; the fake embedder, so the words decide, and they favour the stub."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.retriever.stubs import after_implementations
from codevouch.store import ChunkRecord
from tests.gitrepo import Repo

# The stub repeats the docstring's words in its own doc comment: by words it wins.
FILES = {
    "client/transport.pyi": "def send_over_wire(request: Request, timeout: float = ...) -> Response:\n"
                            "    '''Send the prepared request over the wire and wait for the response.\n\n"
                            "    The prepared request goes over the wire; the response comes back.'''\n    ...\n",
    "client/transport.py": "def send_over_wire(request, timeout=5.0):\n"
                           "    '''Send the prepared request over the wire.'''\n"
                           "    return _socket(timeout).roundtrip(request)\n",
    "client/other.py": "def close_pool(pool):\n    '''Close every socket of the pool.'''\n    pool.clear()\n",
    "web/types/index.d.ts": "/** Render the template with the given context into a page. */\n"
                            "export function renderTemplate(template: string, context: object): string;\n",
}
SENTENCE = "send the prepared request over the wire and wait for the response"


def test_an_implementation_ranks_before_its_stub_for_a_sentence(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder=FakeEmbedder())
    idx.build()
    for mode in ("lexical", "hybrid"):
        hits = idx.search(SENTENCE, k=3, mode=mode, validate=False)
        assert [h.path for h in hits[:2]] == ["client/transport.py", "client/transport.pyi"], mode
        assert all("definition-name" not in h.matched for h in hits), mode
    # The words alone put the stub first (the rule, not the score, moves it): the test can fail.
    scores = {h.path: h.score for h in idx.search(SENTENCE, k=3, mode="lexical", validate=False)}
    assert scores["client/transport.pyi"] > scores["client/transport.py"]
    # No implementation indexed: the declaration is the answer.
    hit = idx.search("render the template with the given context into a page", k=1, validate=False)[0]
    assert hit.path == "web/types/index.d.ts"


def _rec(path: str, symbol: str) -> ChunkRecord:
    return ChunkRecord(id=path + symbol, repo="", path=path, branch="main", commit="", commit_date="", symbol=symbol,
                       start_line=1, end_line=2, indexed_at="", blob_sha="b", text_hash="h", kind="source",
                       language="", status="live")


def test_after_implementations_moves_the_implementation_to_the_stubs_place() -> None:
    stub, other, code = _rec("a.pyi", "Client.send"), _rec("b.py", "close"), _rec("a.py", "Client")
    method = _rec("c.py", "Client.send")
    assert [r.path for r, _ in after_implementations([(stub, 3), (other, 2), (method, 1)])] == ["c.py", "a.pyi", "b.py"]
    # A qualified name meets the other's qualified names or their dotted tails, never a bare
    # owner (`Client`) or a bare member (`send`, a module function of another file).
    assert [r.path for r, _ in after_implementations([(stub, 3), (code, 1)])] == ["a.pyi", "a.py"]
    unrelated = _rec("d.py", "send")
    assert [r.path for r, _ in after_implementations([(stub, 3), (unrelated, 1)])] == ["a.pyi", "d.py"]


def test_a_header_piece_naming_a_member_does_not_declare_its_namespaces_other_pieces() -> None:
    # leveldb's util/crc32c.h: one chunk `leveldb.crc32c, leveldb.crc32c.Unmask` (the namespace's
    # head and the inline Unmask); util/crc32c.cc's chunk of the same namespace defines Extend.
    # Sharing the namespace's name is no declaration: the header, which defines Unmask, stays first.
    header = _rec("util/crc32c.h", "leveldb.crc32c, leveldb.crc32c.Unmask")
    source = _rec("util/crc32c.cc", "leveldb.crc32c")
    assert [r.path for r, _ in after_implementations([(header, 2), (source, 1)])] == ["util/crc32c.h", "util/crc32c.cc"]
    declared = _rec("util/crc32c.cc", "leveldb.crc32c.Unmask")
    assert [r.path for r, _ in after_implementations([(header, 2), (declared, 1)])] == ["util/crc32c.cc", "util/crc32c.h"]


def test_an_implementation_never_overtakes_a_declaration_of_a_higher_tier() -> None:
    # A header piece of namespace billing that defines the class a name query asks for (its tier
    # is the name's) and a source piece of the same namespace that holds no such definition:
    # sharing the namespace's name moves the source piece up only when the two share a tier.
    header = _rec("include/billing/invoice_book.h", "<module>, billing")
    source = _rec("src/invoice_book.cc", "billing")
    tiers = {header.path: 1, source.path: 0}
    assert [r.path for r, _ in after_implementations([(header, 2), (source, 1)], lambda r: tiers[r.path])] == [
        "include/billing/invoice_book.h", "src/invoice_book.cc"]
    assert [r.path for r, _ in after_implementations([(header, 2), (source, 1)])] == [
        "src/invoice_book.cc", "include/billing/invoice_book.h"]


# ky's layout: the types say "beforeRequest hooks" in every line; the body that runs them says it once.
KY = {
    "source/types/hooks.ts": "/** The hooks: each beforeRequest hook is run before the request is sent. */\n"
                             "export interface Hooks {\n"
                             "  /** beforeRequest hooks are run before a request is sent: a hook may change the request. */\n"
                             "  beforeRequest?: BeforeRequestHook[]\n"
                             "}\n\n"
                             "/** A beforeRequest hook, run with the request before it is sent. */\n"
                             "export type BeforeRequestHook = (request: Request) => Request | void\n",
    "source/core/Ky.ts": "export class Ky {\n"
                         "  protected async _fetch(): Promise<Response> {\n"
                         "    for (const hook of this._options.hooks.beforeRequest) {\n"
                         "      const result = await hook(this.request)\n"
                         "      if (result instanceof Request) {\n"
                         "        this.request = result\n"
                         "      }\n"
                         "    }\n"
                         "    return this._options.fetch(this.request)\n"
                         "  }\n"
                         "}\n",
}
BEHAVIOUR = "where are beforeRequest hooks run"


def test_a_body_ranks_above_the_declarations_that_only_name_what_it_does(repo: Repo, index_dir: Path) -> None:
    """A question about behaviour: the method that runs the hooks before the interface and the type
    alias that name them (chunks that only declare: ChunkRecord.declaration), which the words favour;
    a query that asks for a type, or spells a declaration's name, finds the declaration first."""
    from codevouch.retriever.settings import Settings

    repo.commit_files(KY)
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()
    # By rank: the types first in every list, and at half weight after the body, second everywhere.
    idx = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False, settings=Settings(fusion="rrf"))
    hits = idx.search(BEHAVIOUR, k=3, validate=False)
    assert hits[0].path == "source/core/Ky.ts"
    assert {h.symbol: h.record.declaration for h in hits} == {"Ky": False, "Hooks, BeforeRequestHook": True}
    off = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False,
                settings=Settings(fusion="rrf", declaration_weight=1.0))
    assert off.search(BEHAVIOUR, k=3, validate=False)[0].path == "source/types/hooks.ts"   # by words, the types
    # By score (the default), the declaration's score is halved too; here the words favour the types
    # 2 to 4 times over in each list (the fake embedder's cosines 0.29 against 0.07), so they stay
    # first. On ky itself, with the model, the method is first either way (docs/SEARCH.md).
    def declaration_score(weight: float) -> float:
        hits = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False,
                     settings=Settings(declaration_weight=weight)).search(BEHAVIOUR, k=3, validate=False)
        return next(h.score for h in hits if h.record.declaration)
    halved, whole = declaration_score(0.5), declaration_score(1.0)
    assert halved == pytest.approx(whole * 0.5)
    # Asked for by name, a declaration that is the only definition of it comes first.
    assert idx.search("Hooks", k=1, validate=False)[0].path == "source/types/hooks.ts"
    assert idx.search("before request hook", k=1, validate=False)[0].path == "source/types/hooks.ts"
    # A query that asks for a type ranks declarations as bodies.
    asked = "the type of beforeRequest hooks run before a request"
    assert [h.symbol for h in idx.search(asked, k=3, validate=False)] == [
        h.symbol for h in off.search(asked, k=3, validate=False)]


MERGE = {
    "source/utils/merge.ts": "export function deepMerge(target: Options, source: Options): Options;\n"
                             "export function deepMerge(target: Headers, source: Headers): Headers;\n\n"
                             "export function deepMerge(target: any, source: any): any {\n"
                             + "".join(f"  if (source.key{i} !== undefined) {{\n    target.key{i} = source.key{i}\n  }}\n"
                                       for i in range(40))
                             + "  return target\n}\n",
}


def test_a_name_finds_its_implementation_before_its_overload_signatures(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(MERGE)
    from codevouch.retriever.settings import Settings

    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()
    # the signatures' chunk (lines 1-2) says the name twice in two lines: by words it wins
    each = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False, settings=Settings(collapse=False))
    hits = each.search("deepMerge", k=8, validate=False)
    assert hits[0].record.start_line == 4 and [h.record.declaration for h in hits][-1:] == [True]
    assert sum(h.record.declaration for h in hits) == 1
    lexical = each.search("deepMerge", k=8, mode="lexical", validate=False)
    assert max(lexical, key=lambda h: h.score).record.start_line == 1
    # One hit per definition: the implementation's, spanning its signatures too.
    [hit] = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).search("deepMerge", k=3, validate=False)
    last = max(h.record.end_line for h in hits)
    assert (hit.record.start_line, hit.record.end_line, hit.record.declaration) == (1, last, False)
