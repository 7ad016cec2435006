"""One search over several repositories (codevouch/across.py): one ranking whose scores mean the
same in each repository, and every hit checked in its own working tree."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index, Indexes, InputError, NotIndexed
from codevouch.across import BY_RANK, BY_SIMILARITY, MAX_REPOS, fuse, indexed_repositories
from codevouch.results import Hit
from codevouch.store.records import ChunkRecord
from tests.gitrepo import Repo

FAKE = "fake-bow-64"
# A small repository: one function, unrelated to fees.
CONFIG = {"conf/load.py": "def parse_config(path):\n    with open(path) as f:\n        return f.read()\n"}
# A bigger one, the answer to the fees question among other code.
LIBRARY = {
    "lib/fees.py": "def overdue_fee(loan, days):\n    # the overdue fee for days past due\n    return days * loan.rate\n",
    "lib/members.py": "def add_member(name):\n    return {'name': name}\n",
    "lib/books.py": "def find_book(title):\n    return title.lower()\n",
    "lib/shelf.py": "def shelve(book, shelf):\n    shelf.append(book)\n",
}


def _built(path: Path, files: dict[str, str], index_dir: Path) -> Repo:
    repo = Repo.create(path)
    repo.commit_files(files)
    Index(repo.root, index_dir, embedder=FAKE, record=False).build()
    return repo


@pytest.fixture
def two(tmp_path: Path) -> tuple[Repo, Repo, Path]:
    index_dir = tmp_path / "index"
    return (_built(tmp_path / "config", CONFIG, index_dir), _built(tmp_path / "library", LIBRARY, index_dir), index_dir)


def test_neither_repository_floods_the_top_for_the_others_answer(two: tuple[Repo, Repo, Path]) -> None:
    config, library, index_dir = two
    many = Indexes([config.root, library.root], index_dir, record=False)
    fees = many.search("overdue fee days past due", k=3)
    assert fees.fusion == BY_SIMILARITY
    assert (fees[0].repository.path, fees[0].hit.path) == (library.root, "lib/fees.py")
    # The small repository's only chunk, first in its own ranking (score 1.0), does not come first.
    assert fees[0].hit.score == pytest.approx(1.0)
    parse = [f for f in fees if f.repository.path == config.root]
    assert all(f.hit.score == pytest.approx(1.0) for f in parse)
    conf = many.search("parse config path open read", k=3)
    assert (conf[0].repository.path, conf[0].hit.path) == (config.root, "conf/load.py")
    # Either order of the repositories gives the same first hit.
    assert Indexes([library.root, config.root], index_dir, record=False).search(
        "overdue fee days past due", k=3)[0].hit.path == "lib/fees.py"


def test_each_hit_is_checked_in_its_own_working_tree(two: tuple[Repo, Repo, Path]) -> None:
    config, library, index_dir = two
    library.git("remote", "add", "origin", "https://user:secret@example.com/team/library.git")
    # An uncommitted edit in one repository: found live there, and only that repository's hit changes.
    config.write("conf/load.py", CONFIG["conf/load.py"].replace("f.read()", "f.read().strip()")
                 + "\n\ndef overdue_notice(days):\n    return days\n")
    many = Indexes.all(index_dir, record=False)
    assert {r for r in many.repos} == {config.root, library.root}
    found = many.search("overdue fee notice days", k=10, overlay=True)
    by_repo = {(f.repository.path, f.hit.symbol): f for f in found}
    [live] = [f for f in found if f.repository.path == config.root]
    assert "overdue_notice" in live.hit.symbol
    assert live.hit.record.origin == "uncommitted" and live.hit.verdict == "usable"
    assert by_repo[(library.root, "overdue_fee")].hit.verdict == "usable"
    lib = by_repo[(library.root, "overdue_fee")].to_json()
    assert lib["repository"] == {"path": str(library.root), "remote": "https://example.com/team/library.git"}
    assert live.to_json()["repository"] == {"path": str(config.root), "remote": None}
    # Without the overlay, the edited file's indexed chunk is checked against that tree: changed.
    stale = Indexes([config.root, library.root], index_dir, record=False).search("parse config path", k=5,
                                                                                 overlay=False)
    [old] = [f for f in stale if f.repository.path == config.root]
    assert old.hit.verdict == "historical-only"
    assert all(f.hit.verdict == "usable" for f in stale if f.repository.path == library.root)


def test_a_repository_that_cannot_be_searched_is_skipped_and_said(two: tuple[Repo, Repo, Path], tmp_path: Path) -> None:
    config, library, index_dir = two
    unbuilt = Repo.create(tmp_path / "unbuilt")
    unbuilt.commit_files({"a.py": "def a():\n    return 1\n"})
    gone = tmp_path / "gone"
    found = Indexes([config.root, unbuilt.root, gone, library.root], index_dir, record=False).search(
        "overdue fee", k=3)
    assert found[0].hit.path == "lib/fees.py"
    reasons = {s.path: s for s in found.skipped}
    assert reasons[str(unbuilt.root)].not_indexed and "index build" in reasons[str(unbuilt.root)].reason
    assert "not on this machine" in reasons[str(gone)].reason
    assert [r["path"] for r in found.to_json()["repositories"]] == [str(config.root), str(library.root)]


def test_a_repository_moved_away_gives_hits_checked_against_the_indexed_commit_only(
        two: tuple[Repo, Repo, Path], tmp_path: Path) -> None:
    config, library, index_dir = two
    import shutil

    moved = tmp_path / "moved" / "config"
    moved.parent.mkdir()
    shutil.move(str(config.root), str(moved))
    # No clone here holds its commit: a hit, historical-only, with no text, and says why.
    found = Indexes.all(index_dir, record=False).search("parse config path open read", k=5)
    assert found.skipped == ()
    [hit] = [f for f in found if f.repository.path == config.root]
    assert hit.hit.path == "conf/load.py" and hit.hit.verdict == "historical-only"
    assert hit.hit.reason == "not-on-this-machine-nor-commit" and hit.hit.text == "" and hit.hit.code is None
    assert "not on this machine, nor is its indexed commit" in hit.hit.citation
    assert all(f.hit.verdict == "usable" for f in found if f.repository.path == library.root)
    # Searched beside the moved clone, which holds the indexed commit: the old place's hits read their
    # text there, at the indexed commit, and are still only historical-only.
    [old] = [f for f in Indexes([config.root, moved], index_dir, record=False).search("parse config path open read", k=2)
             if f.repository.path == config.root]
    assert (old.repository.path, old.hit.verdict, old.hit.reason) == (config.root, "historical-only", "not-on-this-machine")
    assert old.hit.text == CONFIG["conf/load.py"].rstrip("\n") and old.hit.code is None
    assert "check: historical-only (not on this machine: checked against the indexed commit only)" in old.hit.citation
    pack = Indexes([config.root], index_dir, record=False).context("parse config path", k=1, budget=2000,
                                                                   include_history=True)
    assert "not on this machine" in pack.markdown and "do not implement" in pack.markdown


def test_a_repository_moved_away_is_found_however_its_path_is_spelled(
        two: tuple[Repo, Repo, Path], tmp_path: Path) -> None:
    config, _, index_dir = two
    import shutil

    shutil.move(str(config.root), str(tmp_path / "elsewhere"))
    (tmp_path / "sub").mkdir()
    spelled = tmp_path / "sub" / ".." / config.root.name       # `--repo ../config` from a directory beside it
    found = Indexes([spelled], index_dir, record=False).search("parse config path open read", k=2)
    assert found.skipped == () and found and all(f.hit.reason == "not-on-this-machine-nor-commit" for f in found)


def test_a_path_never_indexed_and_not_here_is_skipped(two: tuple[Repo, Repo, Path], tmp_path: Path) -> None:
    _, library, index_dir = two
    found = Indexes([library.root, tmp_path / "nowhere"], index_dir, record=False).search("overdue fee", k=2)
    [skipped] = found.skipped
    assert skipped.path == str(tmp_path / "nowhere") and "not on this machine" in skipped.reason


def test_bad_selections_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no repository"):
        Indexes([], tmp_path / "index")
    with pytest.raises(InputError, match=f"at most {MAX_REPOS}"):
        Indexes([tmp_path / f"r{i}" for i in range(MAX_REPOS + 1)], tmp_path / "index")
    with pytest.raises(NotIndexed):
        Indexes.all(tmp_path / "empty")
    assert indexed_repositories(tmp_path / "empty") == []


def _hit(path: str, score: float, similarity: float | None, name_match: bool = False) -> Hit:
    rec = ChunkRecord(path, "r", path, "main", "c" * 40, "", path, 1, 2, "", "b" * 40, "t", "source", "python", "live")
    return Hit(rec, score, "", similarity=similarity, name_match=name_match, good_match=name_match or None)


def test_fusion_compares_similarity_never_the_per_repository_score() -> None:
    small = [_hit("small/a.py", 1.0, 0.21), _hit("small/b.py", 0.5, 0.20)]
    big = [_hit("big/a.py", 1.0, 0.80), _hit("big/b.py", 0.9, 0.70), _hit("big/c.py", 0.8, 0.10)]
    assert [h.path for _, h in fuse([small, big], 4)] == ["big/a.py", "big/b.py", "small/a.py", "small/b.py"]
    # One answer: its own order, whatever the similarities.
    assert [h.path for _, h in fuse([big], 3)] == ["big/a.py", "big/b.py", "big/c.py"]
    # A name the query spells outranks similarity; without a common measure, rank by rank.
    named = [_hit("small/named.py", 0.3, 0.05, name_match=True)]
    assert fuse([big, named], 1)[0][1].path == "small/named.py"
    assert [h.path for _, h in fuse([small, big], 3, comparable=False)] == ["small/a.py", "big/a.py", "small/b.py"]
    assert BY_RANK != BY_SIMILARITY


def test_a_weak_first_hit_does_not_hide_its_repository_s_closest_one() -> None:
    # The repository's own order puts a lexical find (far in the model's space) above its closest
    # hit; judged by that first hit alone, the other repository's middling neighbours would take
    # both places above the closest hit.
    own = [_hit("own/words.py", 1.0, 0.15), _hit("own/answer.py", 0.9, 0.50), _hit("own/far.py", 0.8, 0.05)]
    other = [_hit("other/a.py", 1.0, 0.30), _hit("other/b.py", 0.9, 0.28)]
    assert [h.path for _, h in fuse([other, own], 4)] == ["own/words.py", "own/answer.py", "other/a.py", "other/b.py"]
    # Only the next two hits count: a close hit further down does not lift a repository.
    deep = [_hit("deep/a.py", 1.0, 0.10), _hit("deep/b.py", 0.9, 0.10), _hit("deep/c.py", 0.8, 0.90)]
    assert [h.path for _, h in fuse([other, deep], 2)] == ["other/a.py", "other/b.py"]


def test_context_packs_the_fused_hits_in_one_budget(two: tuple[Repo, Repo, Path]) -> None:
    config, library, index_dir = two
    pack = Indexes([config.root, library.root], index_dir, record=False).context("overdue fee days", k=3, budget=2000)
    assert pack.budget.tokens == 2000
    assert f"repository: {library.root}\nsource: lib/fees.py#L1-L3" in pack.markdown
    assert pack.results[0].parsed.path == "library/lib/fees.py"


def test_the_query_is_embedded_once_for_every_repository(two: tuple[Repo, Repo, Path], tmp_path: Path) -> None:
    from codevouch.embedding import FakeEmbedder

    config, library, index_dir = two
    third = _built(tmp_path / "third", {"t.py": "def overdue(days):\n    return days\n"}, index_dir)
    model = FakeEmbedder()
    many = Indexes([config.root, library.root, third.root], index_dir, embedder=model, record=False)
    assert many.search("overdue fee days past due", k=3)[0].hit.path == "lib/fees.py"
    assert model.queries == 1
    many.context("overdue fee days", k=3, budget=2000)
    assert model.queries == 2                     # one call, one query: the next call embeds its own
    # One repository searches as it always has: one embedding per search.
    alone = Index(library.root, index_dir, embedder=model, record=False)
    alone.search("overdue fee", k=3)
    alone.search("overdue fee", k=3)
    assert model.queries == 4


def _serial(repos: list[Path], index_dir: Path, query: str, k: int, hide_excluded: bool = False) -> list[tuple]:
    """What each repository's own validated search gives, fused: every hit of every repository checked."""
    answers = [Index(r, index_dir, record=False, background=False).search(query, k=k, hide_excluded=hide_excluded)
               for r in repos]
    return [(repos[i], h.to_json()) for i, h in fuse(answers, k)]


def test_the_parallel_answer_is_the_serial_one_with_only_its_hits_checked(
        two: tuple[Repo, Repo, Path], tmp_path: Path) -> None:
    config, library, index_dir = two
    third = _built(tmp_path / "third", {"t.py": "def overdue(days):\n    return days\n",
                                        "gen/fees_pb.py": "def overdue_fee_days(days):\n    return days\n"}, index_dir)
    third.write(".codevouch.toml", 'generated = ["gen/"]\n')     # an indexed file excluded now
    library.write("lib/fees.py", LIBRARY["lib/fees.py"] + "\n\ndef waive_fee(loan):\n    return 0\n")
    repos = [config.root, library.root, third.root]
    many = Indexes(repos, index_dir, record=False, background=False)   # no overlay embedded between calls
    for query, k, hide in (("overdue fee days past due", 3, False), ("overdue fee days", 4, True),
                           ("find book title", 2, False), ("parse config", 10, False)):
        found = many.search(query, k=k, hide_excluded=hide)
        assert [(f.repository.path, f.hit.to_json()) for f in found] == _serial(repos, index_dir, query, k, hide)
        assert all(f.hit.check is not None for f in found)
    assert "excluded" in {h.verdict for h in Index(third.root, index_dir, record=False).search("overdue fee days")}
    # The hits that did not make the fused top k were never checked (no git work spent on them).
    found = many.search("overdue fee days past due", k=1)
    [top] = found
    unchecked = [h for r, hits in found.answers for h in hits if h is not top.hit]
    assert unchecked and all(h.check is None for h in unchecked)


def test_the_searches_threads_are_kept_from_one_search_to_the_next(two: tuple[Repo, Repo, Path]) -> None:
    import threading

    config, library, index_dir = two

    def across_threads() -> set[int]:
        return {t.ident or 0 for t in threading.enumerate() if t.name.startswith("codevouch-across")}
    Indexes([config.root, library.root], index_dir, record=False).search("overdue fee", k=3)
    first = across_threads()
    found = Indexes([config.root, library.root], index_dir, record=False).search("parse config", k=3)
    assert first and across_threads() == first      # a new Indexes, a new call: no new thread started
    assert found[0].hit.path == "conf/load.py"


def test_the_remote_label_is_kept_until_the_repository_config_changes(two: tuple[Repo, Repo, Path]) -> None:
    from codevouch.worktree.git._process import PROCESSES

    config, library, index_dir = two
    many = Indexes([config.root, library.root], index_dir, record=False)
    assert {f.repository.remote for f in many.search("overdue fee", k=3)} == {None}
    before = PROCESSES["remote"]
    many.search("overdue fee", k=3)
    # The label kept from the first call, for this Indexes and the next (a CLI or MCP call makes its own).
    Indexes([library.root, config.root], index_dir, record=False).search("overdue fee", k=3)
    assert PROCESSES["remote"] == before
    library.git("remote", "add", "origin", "https://user:secret@example.com/team/library.git")
    found = many.search("overdue fee", k=3)
    assert {f.repository.path: f.repository.remote for f in found}[library.root] == "https://example.com/team/library.git"
    assert {f.repository.path: f.repository.remote for f in found}.get(config.root) is None


def test_a_repository_that_fails_midway_does_not_fail_the_others(two: tuple[Repo, Repo, Path]) -> None:
    import shutil

    config, library, index_dir = two
    many = Indexes([config.root, library.root], index_dir, record=False)
    assert many.search("parse config", k=3)[0].repository.path == config.root
    shutil.rmtree(config.root / ".git")                   # its repository gone between two calls
    found = many.search("parse config", k=3)
    assert [s.path for s in found.skipped] == [str(config.root)]
    assert found and {f.repository.path for f in found} == {library.root}


def test_one_repository_named_two_ways_is_searched_once(two: tuple[Repo, Repo, Path], tmp_path: Path) -> None:
    config, library, index_dir = two
    (tmp_path / "link").symlink_to(library.root)
    many = Indexes([library.root, config.root, tmp_path / "link", library.root / "lib" / ".."], index_dir,
                   record=False)
    assert many.repos == [library.root, config.root]
    fees = many.search("overdue fee days past due", k=5)
    assert [f.hit.path for f in fees].count("lib/fees.py") == 1


def test_an_edit_after_a_warm_call_is_found_at_the_next_one(two: tuple[Repo, Repo, Path],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # A warm Indexes takes git's last HEAD and status of a repository nobody touched
    # (worktree/git/unchanged.py; RACY_NS 0 so that files written a moment ago count as settled,
    # and each change below changes a size or adds an entry): the edit, the commit and the new
    # file that follow a warm call are each found live at the next.
    from codevouch import clear_caches
    from codevouch.worktree import gitio
    from codevouch.worktree.git import unchanged

    config, library, index_dir = two
    clear_caches()
    monkeypatch.setattr(unchanged, "RACY_NS", 0)
    many = Indexes([config.root, library.root], index_dir, record=False)
    many.search("overdue fee days", k=5)
    before = gitio.PROCESSES["status"] + gitio.PROCESSES["rev-parse"]
    assert [f.hit.record.origin for f in many.search("overdue fee days", k=5)] == ["index"] * 5
    assert gitio.PROCESSES["status"] + gitio.PROCESSES["rev-parse"] == before    # nothing touched: no git
    config.write("conf/load.py", CONFIG["conf/load.py"] + "\n\ndef overdue_notice(days):\n    return days\n")
    [live] = [f for f in many.search("overdue notice days", k=10) if f.repository.path == config.root]
    assert "overdue_notice" in live.hit.symbol and live.hit.record.origin == "uncommitted"
    assert live.hit.verdict == "usable"
    config.git("add", "-A")
    config.git("commit", "-q", "-m", "notice")
    [now] = [f for f in many.search("overdue notice days", k=10) if f.repository.path == config.root]
    assert now.hit.record.origin == "committed" and now.hit.verdict == "usable"
    Index(config.root, index_dir, embedder=FAKE, record=False).build()      # the open reader is reopened
    [built] = [f for f in many.search("overdue notice days", k=10, mode="dense") if f.repository.path == config.root]
    assert "overdue_notice" in built.hit.symbol and built.hit.record.origin == "index"
    library.write("lib/late.py", "def late_charge(days):\n    return days * 2\n")
    found = many.search("late charge days", k=10)
    assert any(f.hit.symbol == "late_charge" and f.hit.record.origin == "uncommitted" for f in found)


# Five small repositories, each about one thing: a search across them bounds each first.
TOPICS = {
    "fees": {"fees.py": "def overdue_fee(loan, days):\n    return days * loan.rate\n\n\ndef waive_fee(loan):\n"
                        "    loan.rate = 0\n"},
    "books": {"books.py": "def find_book(title):\n    return title.lower()\n\n\ndef shelve_book(book, shelf):\n"
                          "    shelf.append(book)\n"},
    "members": {"members.py": "def add_member(name):\n    return {'name': name}\n\n\ndef remove_member(members, name):\n"
                              "    members.pop(name)\n"},
    "http": {"client.py": "class Response:\n    def raise_for_status(self):\n        if self.status >= 400:\n"
                          "            raise ValueError(self.status)\n"},
    "config": CONFIG,
    # A name its body never says again, and prose that says the name's words over and over: the name
    # match ranks first across repositories however far the prose's similarity is ahead.
    "ledger": {"settle.py": "def settle_account(x):\n" + "".join(f"    y{n} = compute_total(x, {n})\n" for n in range(12))
               + "    return x\n"},
    "notes": {"notes.py": "def remind():\n    return 'settle account, settle the account, account settle'\n"},
}


@pytest.fixture
def five(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Repo], Path]:
    import codevouch.across as across

    monkeypatch.setattr(across, "BOUND_FROM", 1)     # bound from two repositories on
    index_dir = tmp_path / "index"
    return [_built(tmp_path / name, files, index_dir) for name, files in TOPICS.items()], index_dir


def _answer(many: Indexes, query: str, k: int, **options: object) -> list[tuple[Path, dict]]:
    return [(f.repository.path, f.hit.to_json()) for f in many.search(query, k=k, **options)]  # type: ignore[arg-type]


def test_bounded_repositories_give_the_answer_of_searching_every_one(
        five: tuple[list[Repo], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import codevouch.across as across

    repos, index_dir = five
    roots = [r.root for r in repos]
    queries = [("overdue fee for days past due", 2), ("find a book by its title", 3), ("raise for status", 1),
               ("raise_for_status", 2), ("remove a member by name", 4), ("status", 3), ("the", 2),
               ("parse config path open read", 10), ("settle account", 1)]
    bounded = Indexes(roots, index_dir, record=False, background=False)
    answers = {q: (_answer(bounded, q, k), bounded.search(q, k=k).answers) for q, k in queries}
    monkeypatch.setattr(across, "BOUND_FROM", 1000)
    every = Indexes(roots, index_dir, record=False, background=False)
    for q, k in queries:
        assert answers[q][0] == _answer(every, q, k), q
    assert answers["settle account"][0][0][1]["symbol"] == "settle_account"
    # Each repository is listed in the answer; a sentence about fees searched only some of them.
    fees = answers["overdue fee for days past due"][1]
    assert [r.path for r, _ in fees] != [] and {r.path for r, _ in fees} == set(roots)
    assert any(not hits for _, hits in fees) and any(hits for _, hits in fees)


def test_a_bounded_search_embeds_its_query_once_beside_the_looks(five: tuple[list[Repo], Path]) -> None:
    import threading

    from codevouch.embedding import FakeEmbedder

    class Where(FakeEmbedder):
        threads: list[str] = []

        def embed_query(self, text: str) -> list[float]:
            self.threads.append(threading.current_thread().name)
            return super().embed_query(text)
    repos, index_dir = five
    model = Where()
    many = Indexes([r.root for r in repos], index_dir, embedder=model, record=False, background=False)
    found = many.search("settle account", k=1)
    assert found[0].hit.symbol == "settle_account"
    # Once for every repository, and on the searches' threads, not the one that bounds them.
    assert model.queries == 1 and model.threads[0].startswith("codevouch-across"), model.threads


def test_a_repository_with_an_uncommitted_edit_is_searched_whatever_its_index_holds(
        five: tuple[list[Repo], Path]) -> None:
    repos, index_dir = five
    books = repos[1]
    many = Indexes([r.root for r in repos], index_dir, record=False, background=False)
    assert all(f.repository.path != books.root for f in many.search("overdue fee for days past due", k=2))
    books.write("late.py", "def overdue_fee_for_days_past_due(book, days):\n    return days * book.fee\n")
    found = many.search("overdue fee for days past due", k=2)
    assert any(f.repository.path == books.root and f.hit.record.origin == "uncommitted" for f in found)
