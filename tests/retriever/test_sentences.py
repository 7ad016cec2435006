"""A sentence query (prose: more words than the name tier reads, not one name) asks for the code
that does something: its test prior is its own (Settings.sentence_kind_weights), so a test
that calls the function ranks after it, and a name query keeps every query's kind weights.
Real git, tree-sitter, tantivy and Chroma; the fake embedder, so the words decide."""
from __future__ import annotations

from pathlib import Path

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.retriever.query import read
from codevouch.retriever.settings import DEFAULT, KIND_WEIGHTS, SENTENCE_KIND_WEIGHTS, Settings
from codevouch.store import ChunkRecord
from tests.gitrepo import Repo

UNWEIGHTED = {"source": 1.0, "test": 1.0, "config": 1.0, "docs": 1.0}
# The test repeats the sentence's words; the code says them once: by words alone the test wins.
FILES = {
    "shop/refunds.py": "def settle_refund(order, amount):\n    ledger = order.ledger\n"
                       "    ledger.credit(order.customer, amount)\n    return ledger\n",
    "tests/test_refunds.py": "def test_credits_the_customer_ledger():\n"
                             "    # settle the refund: credit the customer ledger with the order amount\n"
                             "    order = make_order(amount=5)\n    ledger = settle_refund(order, order.amount)\n"
                             "    assert ledger.credited(order.customer) == order.amount  # customer ledger credit\n",
}
SENTENCE = "credit the customer ledger with the refund amount of an order"
NAME = "settle refund"


def _scores(idx: Index, query: str) -> dict[str, float]:
    return {h.path: h.score for h in idx.search(query, k=5, mode="lexical", validate=False)}


def test_a_sentence_has_its_own_test_prior_and_a_name_keeps_every_querys(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(FILES)
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()

    def index(settings: Settings) -> Index:
        return Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False, settings=settings)
    plain = _scores(index(Settings(kind_weights=UNWEIGHTED, sentence_kind_weights=None)), SENTENCE)
    assert plain["tests/test_refunds.py"] > plain["shop/refunds.py"]   # the words favour the test
    shipped = _scores(index(DEFAULT), SENTENCE)
    test_weight = SENTENCE_KIND_WEIGHTS["test"]
    assert test_weight != KIND_WEIGHTS["test"]
    assert round(shipped["tests/test_refunds.py"], 6) == round(plain["tests/test_refunds.py"] * test_weight, 6)
    assert list(shipped)[0] == "shop/refunds.py"
    # A name query is no sentence: every query's test prior.
    assert not read(NAME, "hybrid", DEFAULT).sentence
    named = _scores(index(DEFAULT), "refund ledger credit")
    named_plain = _scores(index(Settings(kind_weights=UNWEIGHTED, sentence_kind_weights=None)), "refund ledger credit")
    assert round(named["tests/test_refunds.py"], 6) == round(
        named_plain["tests/test_refunds.py"] * KIND_WEIGHTS["test"], 6)


def test_what_is_a_sentence() -> None:
    assert read(SENTENCE, "hybrid", DEFAULT).sentence
    assert read(SENTENCE, "dense", DEFAULT).sentence
    assert read(SENTENCE, "hybrid", Settings(name_first_words=0)).sentence
    assert not read("settle_refund", "hybrid", DEFAULT).sentence
    # One long name as a whole is a name, not prose.
    assert not read("test_settle_refund_credits_the_customer_ledger", "hybrid", DEFAULT).sentence
    assert read(SENTENCE, "hybrid", DEFAULT).words[:3] == ("credit", "customer", "ledger")


# The words of the sentence are in the logger's body; the router says them only in its name.
ROUTER = {
    "mux.go": "package chi\n\nfunc (mx *Mux) routeHTTP(w ResponseWriter, r *Request) {\n"
              "\tif h := mx.tree.FindRoute(r.Method, r.URL.Path); h != nil {\n\t\th.ServeHTTP(w, r)\n\t}\n}\n",
    "logger.go": "package chi\n\nfunc (l *Logger) Print(w ResponseWriter, r *Request) {\n"
                 "\tl.Printf(\"request dispatched to handler: the request was dispatched, handler done\")\n"
                 "\tl.Printf(\"request handler dispatched request\")\n}\n",
    "tree.go": "package chi\n\nfunc (n *node) InsertRoute(pattern string, handler Handler) {\n"
               "\tn.children = append(n.children, &node{pattern: pattern, handler: handler})\n}\n",
}
PROSE = "where is the request dispatched to the route handler"


def test_a_sentence_meets_the_words_of_a_definitions_name(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(ROUTER)
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()

    def ranked(weight: float, query: str = PROSE) -> list[str]:
        idx = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False,
                    settings=Settings(name_words_weight=weight, own_words_weight=0.0))
        return [h.path for h in idx.search(query, k=3, mode="lexical", validate=False)]
    assert ranked(0.0)[0] == "logger.go"      # by the body's words, the logger
    # names that say route (`routeHTTP`, `InsertRoute`) before it: by rank the router first by a
    # hair, by score `InsertRoute`, whose body says handler three times
    assert ranked(1.0)[2] == "logger.go"
    # A name query is no sentence: no name-words list, the name tier as before.
    assert ranked(1.0, "InsertRoute") == ranked(0.0, "InsertRoute")
    assert ranked(1.0, "InsertRoute")[0] == "tree.go"


def test_plain_words_that_name_no_definition_are_a_sentence(repo: Repo, index_dir: Path) -> None:
    """Five to eight plain words with no stop might be one long name's words ("build wheel for
    abi 3 target"): when no definition has that name, they are a sentence, with its priors."""
    repo.commit_files(FILES)
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()
    words = "credit the customer ledger with the refund"     # 7 words, no full stop
    assert read(words, "hybrid", DEFAULT).undecided and not read(words, "hybrid", DEFAULT).sentence
    plain = _scores(Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False,
                          settings=Settings(kind_weights=UNWEIGHTED, sentence_kind_weights=None)), words)
    assert plain["tests/test_refunds.py"] > plain["shop/refunds.py"]   # the words favour the test
    shipped = _scores(Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False), words)
    assert round(shipped["tests/test_refunds.py"], 6) == round(
        plain["tests/test_refunds.py"] * SENTENCE_KIND_WEIGHTS["test"], 6)
    assert list(shipped)[0] == "shop/refunds.py"
    # The words of a name that is defined stay a name query: its definition first.
    hits = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).search(
        "test credits the customer ledger", k=2, validate=False)
    assert hits[0].path == "tests/test_refunds.py" and hits[0].matched[0] == "definition-name"


def test_a_members_own_name_words_leave_its_classs_out(repo: Repo, index_dir: Path) -> None:
    """The README's order story: the legacy handler's class shares the sentence's words (cancel,
    order) and its method one more (request); the service's method is named for what the sentence
    asks (cancel_order). Against the qualified names' words the handler comes first; against each
    name's own words (Settings.own_words_weight, the default's list), the service."""
    from tests.retriever.test_opening_example import FILES as STORY
    from tests.retriever.test_opening_example import QUERY

    repo.commit_files(STORY)
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()

    def first(settings: Settings) -> str:
        idx = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False, settings=settings)
        return idx.search(QUERY, k=3, mode="lexical", validate=False)[0].symbol
    assert first(Settings(name_words_weight=1.0, own_words_weight=0.0)) == "CancelOrderHandler.handle_request"
    assert first(DEFAULT) == "OrderService.cancel_order"
    assert first(Settings(name_words_weight=0.0, own_words_weight=1.0)) == "OrderService.cancel_order"


# A test's first doc sentence, asked as a query, where the test says it (its name and comment)
# more than twice as strongly as the code it calls.
DESCRIBED = {
    **FILES,
    "tests/test_refunds.py": "def test_settle_refund_credits_the_customer_ledger():\n"
                             "    # settle the refund: credit the customer ledger with the order amount\n"
                             "    order = make_order(amount=5)\n    ledger = settle_refund(order, order.amount)\n"
                             "    assert ledger.credited(order.customer) == order.amount  # customer ledger credit\n",
}


def test_a_sentence_that_describes_a_test_finds_the_test(repo: Repo, index_dir: Path) -> None:
    """The sentence prior ranks a test after the code it calls unless the test's evidence is more
    than 1 / its weight times the code's: a test that the sentence describes is found (at 0.1,
    the first doc sentences of attrs' tests found their test at 0.033 MRR@10)."""
    repo.commit_files(DESCRIBED)
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()
    plain = _scores(Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False,
                          settings=Settings(kind_weights=UNWEIGHTED, sentence_kind_weights=None)), SENTENCE)
    assert plain["tests/test_refunds.py"] > 2 * plain["shop/refunds.py"]
    shipped = _scores(Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False), SENTENCE)
    assert list(shipped) == ["tests/test_refunds.py", "shop/refunds.py"]


def test_a_chunk_of_several_names_meets_a_sentence_by_its_best_name() -> None:
    """The own-words list scores a chunk of several small definitions by the one name the sentence
    describes (Settings.own_words_per_name): all its names' words at once, BM25's length norm held
    the merged chunk below a one-name neighbour with the same word."""
    from codevouch.retriever.lexlists import per_name
    from codevouch.store import lexindex

    merged = _record("m", "ParamType.__call__, ParamType.get_metavar, ParamType.get_missing_message")
    alone = _record("a", "Choice.get_metavar")
    other = _record("o", "Choice.convert")
    records = {r.id: r for r in (merged, alone, other)}
    stats = lexindex.Stats(docs=40, tokens=120.0, df={"get": 12, "metavar": 3, "param": 5})
    scores = {"a": 3.0, "m": 1.5, "o": 0.5}   # as the field scores them: the merged chunk second
    ranked = per_name(["a", "m", "o"], records, scores, lambda tokens: stats, ["metavar", "param"])
    assert ranked[-1] == "o" and scores["o"] == 0.0
    assert scores["m"] == scores["a"] > 0   # `get_metavar` alone, in both
    # no counts to score with: the field's order stands
    assert per_name(["a", "m"], records, {"a": 3.0, "m": 1.5}, lambda tokens: None, ["metavar"]) == ["a", "m"]


def _record(cid: str, symbol: str) -> ChunkRecord:
    return ChunkRecord(id=cid, repo="/r", path="types.py", branch="main", commit="c", commit_date="d", symbol=symbol,
                       start_line=1, end_line=3, indexed_at="t", blob_sha="b", text_hash=cid, kind="source",
                       language="python", status="live")
