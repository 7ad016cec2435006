"""The NumPy query encoder must give the packaged model's vectors (it replaces torch at search time)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from codevouch.embedding import MiniLMEmbedder
from codevouch.embedding.numpy_minilm import numpy_minilm

# Real CLI processes (-X importtime) with the real model.
pytestmark = [pytest.mark.process, pytest.mark.model]


def test_numpy_encoder_matches_sentence_transformers() -> None:
    texts = ["where do we cancel orders", "def area(r):\n    return 3.14 * r * r\n" * 30,
             "caf\xe9 \u65e5\u672c\u8a9e", "x"]
    ours = np.array(numpy_minilm().embed(texts))
    reference = np.array(MiniLMEmbedder().embed(texts))
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() > 0.9999, cosines
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_numpy_encoder_pass_stays_float32() -> None:
    # A NumPy float64 scalar anywhere in the pass promotes the hidden state to float64, and then
    # every matmul converts its weights to float64 first: twice the cost (measured: 37 vs 18 ms).
    assert numpy_minilm()._forward("where do we cancel orders").dtype == np.float32


def _chunks() -> list[str]:
    """50 chunks of Python, Go, TypeScript and Rust, as a build would embed them (path and symbol
    above the code), of a few to ~250 tokens."""
    out = []
    for n in range(13):
        body = "\n".join(f"    total += item.price * {k}  # line {k}" for k in range(n * 3))
        out.append(f"shop/orders_{n}.py\nOrderService.total_{n}\n\ndef total_{n}(self, items):\n"
                   f"    \"\"\"Sum the prices of an order's items, {n} times over.\"\"\"\n    total = 0\n{body}\n"
                   "    return total\n")
        out.append(f"cmd/serve_{n}.go\nServer.Handle{n}\n\nfunc (s *Server) Handle{n}(w http.ResponseWriter, "
                   "r *http.Request) {\n" + "\n".join(f"\tif err := s.step{k}(r); err != nil {{\n\t\thttp.Error(w, "
                                                      f"err.Error(), {400 + k})\n\t\treturn\n\t}}" for k in range(n))
                   + "\n\tw.WriteHeader(http.StatusOK)\n}\n")
        out.append(f"web/profile_{n}.ts\nfetchProfile{n}\n\nexport async function fetchProfile{n}(id: string): "
                   "Promise<Profile> {\n" + "".join(f"  const part{k} = await fetch(`/api/users/${{id}}/{k}`);\n"
                                                    for k in range(n * 2)) + "  return merge(parts);\n}\n")
        if len(out) < 50:
            out.append(f"src/parse_{n}.rs\nParser::next_token_{n}\n\nimpl Parser {{\n    pub fn next_token_{n}(&mut "
                       "self) -> Option<Token> {\n" + "".join(f"        if self.peek() == b'{chr(97 + k)}' {{ "
                                                               f"return Some(Token::Letter({k})); }}\n"
                                                               for k in range(n * 2)) + "        None\n    }\n}\n")
    return out[:50]


def test_overlay_encoder_matches_the_builds_on_chunks_of_four_languages() -> None:
    texts = _chunks()
    assert len(texts) == 50
    embedder = MiniLMEmbedder()
    ours = np.array([embedder.embed_one(t) for t in texts])     # what a search embeds an overlay chunk with
    reference = np.array(embedder.embed(texts))                 # what a build embeds it with (torch)
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines.min()


NO_TORCH_FILES = {
    "shop/orders.py": "def cancel_order(order_id):\n    \"\"\"Cancel an order so that it is not shipped.\"\"\"\n"
                      "    return repo.get(order_id).cancel()\n",
    "shop/geometry.py": "import math\n\n\ndef circle_area(radius):\n    \"\"\"Area of a circle.\"\"\"\n"
                        "    return math.pi * radius ** 2\n",
}


def _imported(stderr: str) -> set[str]:
    """The top-level packages `python -X importtime` says the process imported."""
    return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_a_search_after_an_edit_embeds_it_without_torch(tmp_path: Path) -> None:
    from codevouch import Index
    from codevouch.indexer import overlay as derived
    from codevouch.store import overlaycache
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    repo.commit_files(NO_TORCH_FILES)
    index_dir = tmp_path / "index"
    env = {**os.environ, "CODEVOUCH_INDEX": str(index_dir), "HF_HUB_OFFLINE": "1"}

    def cv(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-X", "importtime", "-m", "codevouch", *args], cwd=repo.root,
                              env=env, capture_output=True, text=True, timeout=600, input=stdin)

    env["CODEVOUCH_BUILD_NUMPY_TEXTS"] = "0"            # a build with torch, whatever its size
    built = cv("index", "build", "--json")
    assert built.returncode == 0, built.stderr[-2000:]
    assert "torch" in _imported(built.stderr)            # the build does use torch: the check can see it
    del env["CODEVOUCH_BUILD_NUMPY_TEXTS"]
    repo.write("shop/refund.py", "def refund_payment(payment):\n    \"\"\"Give the money back to the card.\"\"\"\n"
                                 "    return payment.card.refund(payment.amount)\n")
    found = cv("search", "give the money back to the card", "--json", "-k", "3")
    assert found.returncode == 0, found.stderr[-2000:]
    hits = json.loads(found.stdout)
    assert hits[0]["path"] == "shop/refund.py"
    [summary] = [json.loads(line) for line in found.stderr.splitlines() if line.startswith("{")]
    assert summary["overlay"]["embedded"] == 1
    pack = cv("context", "area of a circle", "-k", "2")
    checked = cv("validate", "--json", stdin=found.stdout)
    for proc in (found, pack, checked):
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert not {"torch", "sentence_transformers", "transformers"} & _imported(proc.stderr), proc.args
    # The vector the search kept is the one a build makes of the same text (so either cache serves both).
    idx = Index(repo.root, index_dir)
    state = idx._branch_state(repo.root, "main")
    assert state is not None
    derived.clear()
    [chunk] = [c for c in derived.derive(repo.root, state).chunks if c.record.path == "shop/refund.py"]
    overlaycache.forget_memory()
    kept = overlaycache.get(index_dir, state.embedder, [chunk.record.text_hash])[chunk.record.text_hash]
    [by_torch] = MiniLMEmbedder().embed([chunk.embedded])
    assert float(np.dot(kept, by_torch)) >= 0.9999


def test_a_one_file_build_imports_no_torch_and_the_cache_serves_its_vectors_either_way(tmp_path: Path) -> None:
    """The build the hooks run after a one-file commit embeds its few texts with the NumPy pass
    (no torch imported); the vectors are the ones torch makes (cosine >= 0.9999), kept in the
    same embedding cache and store, which a search then ranks with the others."""
    from codevouch.embedding import DEFAULT_EMBED_CONTEXT, MODEL_NAME, token_counter
    from codevouch.indexer.build import text_hash
    from codevouch.indexer.chunker import chunk_text
    from codevouch.indexer.embedtext import embedded_text
    from codevouch.store import Ledger
    from tests.gitrepo import Repo

    repo = Repo(tmp_path / "repo")
    repo.commit_files(NO_TORCH_FILES)
    index_dir = tmp_path / "index"
    env = {**os.environ, "CODEVOUCH_INDEX": str(index_dir), "HF_HUB_OFFLINE": "1", "CODEVOUCH_SERVER": "off"}

    def build(*args: str, numpy_texts: str | None = None) -> tuple[dict, set[str]]:
        run_env = env if numpy_texts is None else {**env, "CODEVOUCH_BUILD_NUMPY_TEXTS": numpy_texts}
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "codevouch", "index", "build", "--json",
                               *args], cwd=repo.root, env=run_env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)["branches"][0], _imported(proc.stderr)

    first, imported = build()
    assert first["embedded"] == 2 and not {"torch", "sentence_transformers", "transformers"} & imported
    refund = "def refund_payment(payment):\n    \"\"\"Give the money back to the card.\"\"\"\n" \
             "    return payment.card.refund(payment.amount)\n"
    repo.commit_files({"shop/refund.py": refund})
    summary, imported = build()
    assert summary["embedded"] == 1
    assert not {"torch", "sentence_transformers", "transformers"} & imported
    [chunk] = chunk_text(refund, "shop/refund.py", token_counter(), 250)[0]
    text = embedded_text("shop/refund.py", chunk.symbol, chunk.text, DEFAULT_EMBED_CONTEXT)
    ledger = Ledger(index_dir, readonly=True)
    try:
        kept = ledger.cached_vectors(MODEL_NAME, [text_hash(text)])[text_hash(text)]
    finally:
        ledger.close()
    [by_torch] = MiniLMEmbedder().embed([text])
    assert float(np.dot(kept, by_torch)) >= 0.9999
    from codevouch import Index

    hits = Index(repo.root, index_dir, record=False).search("give the money back to the card", k=3)
    assert hits[0].path == "shop/refund.py" and hits[0].verdict == "usable"
