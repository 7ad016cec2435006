"""Choosing the embedding model and device by configuration: the packaged MiniLM (default), or a
local sentence-transformers model directory; nothing is ever downloaded. A model of its own
embeds into a vector space of its own, and `index status` names it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.embedding import (
    LIGHT_TEXTS,
    MODEL_NAME,
    FakeEmbedder,
    MiniLMEmbedder,
    SentenceTransformerEmbedder,
    build_encoder,
    check_device,
    embedder_by_name,
    is_packaged,
    model_name,
)
from codevouch.embedding.model_files import model_path
from codevouch.errors import ConfigError, InputError
from codevouch.worktree.config import RepoConfig, embedding_choice, load_repo_config
from tests.clihelp import cv
from tests.gitrepo import Repo

SHOP = {"shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
        "shop/refund.py": "def refund_order(order):\n    return order.refund()\n"}


def test_the_environment_beats_the_config_which_beats_the_default(repo: Repo, tmp_path: Path) -> None:
    assert embedding_choice(RepoConfig(), None, {}).model is None
    repo.write(".codevouch.toml", '[embedding]\nmodel = "models/mini"\ndevice = "cpu"\nmatch_threshold = 0.4\n')
    cfg = load_repo_config(repo.root)
    mine = embedding_choice(cfg, repo.root, {})
    assert (mine.model, mine.base, mine.device, mine.match_threshold) == ("models/mini", repo.root, "cpu", 0.4)
    env = embedding_choice(cfg, repo.root, {"CODEVOUCH_EMBEDDING_MODEL": "/opt/m", "CODEVOUCH_EMBEDDING_DEVICE": "cuda",
                                            "CODEVOUCH_MATCH_THRESHOLD": "0.5"})
    assert (env.model, env.base, env.device, env.match_threshold, env.source) == (
        "/opt/m", None, "cuda", 0.5, "CODEVOUCH_EMBEDDING_MODEL")
    repo.write(".codevouch.toml", '[embedding]\nmodle = "x"\n')
    with pytest.raises(ConfigError, match="unknown key"):
        embedding_choice(load_repo_config(repo.root), repo.root, {})
    with pytest.raises(ConfigError, match="CODEVOUCH_MATCH_THRESHOLD"):
        embedding_choice(RepoConfig(), None, {"CODEVOUCH_MATCH_THRESHOLD": "high"})


def test_a_model_that_is_not_a_directory_is_a_clear_error(tmp_path: Path) -> None:
    for name in ("sentence-transformers/all-mpnet-base-v2", str(tmp_path / "absent")):
        with pytest.raises(InputError, match="never downloads"):
            embedder_by_name(name)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no sentence-transformers model"):
        model_name(str(tmp_path / "empty"))
    with pytest.raises(InputError, match="device"):
        check_device("tpu")
    assert check_device("cuda:1") == "cuda:1"


def test_names_and_directories(tmp_path: Path) -> None:
    assert isinstance(embedder_by_name(MODEL_NAME), MiniLMEmbedder)
    assert isinstance(embedder_by_name(FakeEmbedder.name), FakeEmbedder)
    packaged = model_path().resolve()
    by_dir = embedder_by_name(str(packaged), device="cpu")
    assert isinstance(by_dir, SentenceTransformerEmbedder) and by_dir.name == f"st:{packaged}"
    # The recorded name finds the same directory again; a relative one is relative to its base.
    assert embedder_by_name(by_dir.name).name == by_dir.name
    assert model_name(packaged.name, packaged.parent) == by_dir.name
    assert is_packaged(by_dir.name) and is_packaged(MODEL_NAME) and not is_packaged(FakeEmbedder.name)


def test_a_configured_model_that_is_no_directory_stops_the_build_not_the_search(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    assert cv("index", "build", "--embedder", "fake-bow-64", cwd=repo.root, index=index_dir).returncode == 0
    repo.write(".codevouch.toml", '[embedding]\nmodel = "BAAI/bge-small-en"\n')
    build = cv("index", "build", cwd=repo.root, index=index_dir)
    assert build.returncode == 2 and "never downloads" in build.stderr, build.stderr
    # The branch was built with the fake: its search uses the fake, whatever the setting says.
    found = cv("search", "cancel order", "--json", "-k", "1", cwd=repo.root, index=index_dir)
    assert found.returncode == 0 and json.loads(found.stdout)[0]["path"] == "shop/cancel.py", found.stderr


def test_the_configured_threshold_says_no_good_match(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({**SHOP, ".codevouch.toml": "[embedding]\nmatch_threshold = 0.3\n"})
    assert cv("index", "build", "--embedder", "fake-bow-64", cwd=repo.root, index=index_dir).returncode == 0
    miss = cv("search", "quantum chromodynamics lattice", cwd=repo.root, index=index_dir)
    assert miss.returncode == 0, miss.stderr
    assert miss.stdout.startswith("no good match: the closest of") and len(miss.stdout.splitlines()) == 1
    shown = cv("search", "quantum chromodynamics lattice", "--all", "--format", "brief", cwd=repo.root, index=index_dir)
    assert shown.stdout.splitlines()[0].endswith(" weak  [dense]"), shown.stdout   # what matched, once known
    assert shown.stdout.splitlines()[-1].startswith("no good match")
    hit = cv("search", "cancel order", "--format", "brief", cwd=repo.root, index=index_dir)
    assert hit.stdout.startswith("usable  shop/cancel.py:1-3  cancel_order")
    # A name spelled exactly is a good match whatever its cosine; in lexical mode too.
    named = Index(repo.root, index_dir, record=False).search("REFUND_ORDER", k=2, mode="lexical")
    assert named[0].path == "shop/refund.py" and named[0].name_match and named[0].good_match is True
    words = Index(repo.root, index_dir, record=False).search("refund order", k=2)
    assert words[0].name_match and not words.no_good_match


@pytest.mark.model
def test_a_model_by_directory_embeds_into_its_own_space(repo: Repo, index_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The packaged MiniLM passed as a directory (the user's setting: a repository's own config
    may not name one outside it): a model of its own (another space, the branch re-embedded),
    named by `index status`, with the packaged model's threshold."""
    repo.commit_files(SHOP)
    (first,) = Index(repo.root, index_dir, embedder="fake-bow-64").build()
    packaged = model_path().resolve()
    monkeypatch.setenv("CODEVOUCH_EMBEDDING_MODEL", str(packaged))
    repo.write(".codevouch.toml", '[embedding]\ndevice = "auto"\n')
    idx = Index(repo.root, index_dir, record=False)
    (moved,) = idx.build()
    assert moved.embedded == first.embedded > 0     # every chunk embedded again, in the new space
    status = json.loads(cv("index", "status", "--json", "--repo", str(repo.root), index=index_dir).stdout)
    assert status["branches"][0]["embedder"] == f"st:{packaged}"
    text = cv("index", "status", "--repo", str(repo.root), index=index_dir).stdout
    assert f"  model: st:{packaged}" in text
    hits = idx.search("cancel an order", k=2)
    assert hits[0].path == "shop/cancel.py" and hits[0].similarity is not None and hits[0].good_match is True
    miss = idx.search("render a triangle mesh with opengl shaders", k=2)
    assert miss.no_good_match, [h.similarity for h in miss]


_OPENED: list[str] = []
_WATCH: list[str] = []      # the directory whose opens the hook records, while a test watches


def _audit(event: str, args: tuple) -> None:
    if event == "open" and _WATCH and isinstance(args[0], str) and args[0].startswith(_WATCH[0]):
        _OPENED.append(args[0])


@pytest.mark.parametrize("written", ["absolute", "climbing", "linked"])
def test_a_repositorys_config_may_not_name_a_model_outside_it(repo: Repo, tmp_path: Path, index_dir: Path,
                                                            written: str) -> None:
    """A cloned repository's `.codevouch.toml` naming a model directory elsewhere makes nothing
    there be opened, and no file's content reaches a message; the user's own setting may."""
    import sys

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "config.json").write_text('{"model_type": "SECRET-4711"}')
    repo.commit(**SHOP)
    if written == "linked":
        (repo.root / "models").symlink_to(outside)
    named = {"absolute": str(outside), "climbing": "../outside", "linked": "models"}[written]
    repo.write(".codevouch.toml", f'[embedding]\nmodel = "{named}"\n')
    sys.addaudithook(_audit)
    _OPENED.clear()
    _WATCH[:] = [str(outside)]
    try:
        with pytest.raises(InputError, match="outside the repository") as refused:
            Index(repo.root, index_dir).build()
    finally:
        _WATCH.clear()
    assert _OPENED == [] and "SECRET" not in str(refused.value)
    out = cv("index", "build", "--repo", str(repo.root), index=index_dir)
    assert out.returncode == 2 and "outside the repository" in out.stderr and "SECRET" not in out.stderr
    assert "CODEVOUCH_EMBEDDING_MODEL" in out.stderr


def test_a_build_of_few_texts_embeds_them_without_torch_and_of_many_with_it() -> None:
    """build_encoder: the packaged MiniLM's NumPy pass up to the limit, torch past it; a model
    with no light encoder (a directory's, the fake) always its own `embed`."""
    minilm = MiniLMEmbedder()
    assert build_encoder(minilm, 1) == minilm.embed_light
    assert build_encoder(minilm, LIGHT_TEXTS) == minilm.embed_light
    assert build_encoder(minilm, LIGHT_TEXTS + 1) == minilm.embed
    assert build_encoder(minilm, 1, light_limit=0) == minilm.embed
    assert build_encoder(minilm, 500, light_limit=500) == minilm.embed_light
    fake = FakeEmbedder()
    assert build_encoder(fake, 1) == fake.embed
    assert minilm._model is None      # choosing loads nothing


@pytest.mark.model
def test_once_torch_is_loaded_a_small_build_embeds_with_it_too() -> None:
    minilm = MiniLMEmbedder()
    assert build_encoder(minilm, 1) == minilm.embed_light
    minilm.embed(["def overdue_fee(days): ..."])          # a large branch before it loaded torch
    assert build_encoder(minilm, 1) == minilm.embed and build_encoder(minilm, 1, light_limit=500) == minilm.embed
    other = MiniLMEmbedder()                                  # another embedder: its own model, not loaded
    assert build_encoder(other, 1) == other.embed_light
