"""A declaration (`.pyi`, `.d.ts`) ranks after the implementation it declares for a sentence
too; a declaration with no implementation is the answer. Real git, tree-sitter, tantivy and
Chroma; the fake embedder, so the words decide, and they favour the stub."""
from __future__ import annotations

from pathlib import Path

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
