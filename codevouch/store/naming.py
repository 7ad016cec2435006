"""Names on disk and on the server: where the index lives, what its collections and rows are called.

Content decides identity: a chunk's id is its path, blob and position; a lexical row's key its
path, symbol and text; a repository's vector space is named by the repository and the model.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from codevouch import embedding
from codevouch.environment import Environment


def default_index_dir(env: Environment) -> Path:
    """--index, else $CODEVOUCH_INDEX, else $XDG_DATA_HOME/codevouch (~/.local/share/codevouch),
    of the caller's environment `env`."""
    given = env.index
    if given:
        return Path(env.expanduser(given))
    base = env.expanduser(env.get("XDG_DATA_HOME") or "")
    if not os.path.isabs(base):
        # The XDG spec: a relative value is invalid and ignored (it would put the index in
        # whatever directory the command runs in: inside the repository).
        base = os.path.join(env.expanduser("~"), ".local", "share")
    return Path(base) / "codevouch"


def collection_base(repo: str, branch: str, clone: str | None = None) -> str:
    """The key of a branch's entry (`branches.coll`): the repository's id and the branch, shared by
    every clone of the repository; with `clone` (a clone's root), that clone's own entry, which a
    build makes when the shared one belongs to another clone of the repository on this machine
    (codevouch/indexer/build.py: `branch_key`), so that no clone's build overwrites another's."""
    # Chroma names allow [A-Za-z0-9._-] only; the hash keeps any branch name legal and unique.
    form = f"{repo}\0{branch}" if clone is None else f"{repo}\0{branch}\0clone\0{clone}"
    digest = hashlib.sha1(form.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return f"cv-{digest}"


# A space's vectors are keyed by the embedded text's hash (m004). Spaces of the release before
# (suffix "-vec") keyed them by chunk id; m005 lists their branches as outdated (migrations.py).
SPACE_SUFFIX = "-txt"


def space_name(repo_id: str, embedder: str, context: str | None = embedding.DEFAULT_EMBED_CONTEXT) -> str:
    """The collection that holds a repository's vectors for one model, shared by its branches.
    What the model embeds (`context`, the build's Settings.embed_context; see
    codevouch/indexer/embedtext.py) is part of it: a branch embedded another way is in another
    space, which its next build leaves, as for another model."""
    form = f"\0{context}" if context is not None else ""  # None: the text alone, the older name
    digest = hashlib.sha1(f"{repo_id}\0{embedder}{form}".encode()).hexdigest()[:20]
    return f"cv-{digest}{SPACE_SUFFIX}"


def chunk_id(path: str, blob_sha: str, ordinal: int) -> str:
    """Same path, same blob, same position: same chunk. Content decides identity."""
    return hashlib.sha1(f"{path}\0{blob_sha}\0{ordinal}".encode("utf-8", "surrogateescape")).hexdigest()


def lex_key(path: str, symbol: str, text_hash: str) -> str:
    """The key of a chunk's lexical document, which is made of its path, symbol and text
    (codevouch.store.lexical.document): chunks that agree on all three share one row."""
    return hashlib.sha1(f"{path}\0{symbol}\0{text_hash}".encode("utf-8", "surrogateescape")).hexdigest()
