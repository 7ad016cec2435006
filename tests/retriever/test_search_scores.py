"""Scores that mean something: each hit's similarity (query . chunk cosine, comparable across
queries) and whether it is a good match; `--format brief`, one line per hit; one line instead of
ten hits when nothing matches well."""
from __future__ import annotations

import json
import math
from pathlib import Path

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.retriever.settings import Settings
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
    "shop/ship.py": "def ship_parcel(parcel):\n    return parcel.ship()\n",
}


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_every_hit_carries_its_cosine_whichever_half_found_it(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    fake = FakeEmbedder()
    hits = idx.search("cancel order", k=3, validate=False, overlay=False)
    assert len(hits) == 3
    from codevouch.indexer.embedtext import embedded_text
    for h in hits:
        # The cosine of the query's vector and the chunk's embedded text, as the model gives them.
        want = cosine(fake.embed_query("cancel order"), fake.embed([embedded_text(h.path, h.symbol, h.text)])[0])
        assert h.similarity is not None and abs(h.similarity - want) < 1e-4, (h.path, h.similarity, want)
    # The fused score is still 1.0 for what both halves rank first; the similarity is not.
    assert hits[0].score == 1.0 and hits[0].similarity < 0.99
    # Lexical mode embeds no query: no similarity, no judgement but the name's.
    lex = idx.search("cancel order", k=3, validate=False, overlay=False, mode="lexical")
    assert lex and all(h.similarity is None for h in lex)
    assert [(h.name_match, h.good_match) for h in lex] == [(True, True)] + [(False, None)] * (len(lex) - 1)
    # A working-tree chunk gets its cosine too.
    repo.write("shop/track.py", "def track_parcel(parcel):\n    return parcel.where()\n")
    live = idx.search("track parcel", k=2, validate=False)
    assert live[0].path == "shop/track.py" and live[0].similarity is not None and live[0].similarity > 0.3


def test_good_match_and_the_no_good_match_line(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    Index(repo.root, index_dir, embedder="fake-bow-64").build()
    strict = Index(repo.root, index_dir, embedder="fake-bow-64", record=False, settings=Settings(match_threshold=0.3))
    good = strict.search("cancel order", k=3, overlay=False)
    assert good[0].good_match is True and not good.no_good_match and good.note() is None
    bad = strict.search("quantum chromodynamics lattice", k=3, overlay=False)
    assert bad and all(h.good_match is False for h in bad) and bad.no_good_match
    assert bad.note() is not None and bad.note().startswith("no good match")
    # A context pack of weak hits says so in its report and its manifest (the hits stay, ranked).
    weak = strict.context("quantum chromodynamics lattice", k=3, budget=4000, overlay=False)
    assert weak.no_good_match and weak.manifest()["no_good_match"] is True
    assert "\nmatch: no good match: the closest of" in weak.markdown
    fine = strict.context("cancel order", k=3, budget=4000, overlay=False)
    assert not fine.no_good_match and "\nmatch:" not in fine.markdown
    # The packaged fake has no measured threshold: no judgement unless one is set.
    plain = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    assert all(h.good_match is None for h in plain.search("quantum chromodynamics lattice", k=3, overlay=False))


def test_brief_format_and_json_fields(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({**SHOP, "shop/cancel_\u202eorder.py": "def cancel_all_orders():\n    return 1\n"})
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    repo.write("shop/cancel.py", "# moved down\n\n" + SHOP["shop/cancel.py"])
    out = cv("search", "cancel order", "--format", "brief", "-k", "4", "--no-overlay", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 4, lines
    verdict, where, symbol, sim = lines[0].split("  ")[:4]
    # The hit moved two lines down: brief shows where the code is now.
    assert (verdict, where, symbol) == ("stale-but-ok", "shop/cancel.py:3-5", "cancel_order")
    assert 0 < float(sim) < 1 and lines[0].endswith("[definition-name,lexical,dense]"), lines[0]
    # Repository text is escaped: the bidi override cannot reorder the line.
    assert "\u202e" not in out.stdout and any("\\u202e" in line for line in lines)
    js = json.loads(cv("search", "cancel order", "--json", "-k", "2", "--no-overlay", cwd=repo.root,
                       index=index_dir).stdout)
    assert {"score", "similarity", "good_match", "verdict", "path"} <= set(js[0])
    assert isinstance(js[0]["similarity"], float) and js[0]["name_match"] is True and js[0]["good_match"] is True
    assert js[1]["name_match"] is False and js[1]["good_match"] is None   # the fake has no measured threshold
    text = cv("search", "cancel order", "-k", "1", "--no-overlay", cwd=repo.root, index=index_dir).stdout
    assert "similarity: 0." in text and "score: 1.000" not in text
    raw = cv("search", "cancel order", "--format", "brief", "-k", "2", "--no-validate", "--no-overlay", cwd=repo.root,
             index=index_dir)
    assert raw.stdout.splitlines()[0].startswith("unchecked  shop/cancel.py:1-3  cancel_order  0.")
    bad = cv("search", "x", "--format", "list", cwd=repo.root, index=index_dir)
    assert bad.returncode == 2 and "brief" in bad.stderr
