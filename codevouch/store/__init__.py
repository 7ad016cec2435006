"""The index on disk: a SQLite ledger (authoritative records, embedding cache) beside Chroma.

The modules, one concept each:
    indexdir    IndexDir: the index directory and the names of what it holds (state.sqlite,
                chroma/, lexical/, team/, usage.sqlite, the locks)
    naming      collection and space names, chunk ids, lexical keys, where the index lives
    records     ChunkRecord, FileRow, BranchState, NewChunk, BuildChange, Committed, Outdated
    ledgerfile  opening state.sqlite (read-only, immutable, errors, upgrades in place)
    migrations  the ordered format steps of state.sqlite (never a rebuild); branches an older
                release laid out are data (`outdated`, m005), read by status, search and build
    ledger      Ledger: the SQLite half, small typed reads and one transaction per build
    ledgerlook  a reader's small answers kept while the ledger file's stat data are unchanged
    vectors     VectorStore: the Chroma half (embedded in chroma/, or a server)
    locks       write.lock (one build at a time) and vectors.lock (writes versus readers)
    settings    StoreSettings: the caller's server, timeouts and lease, handed to what opens the store
    writer      Writer: the storage protocol of a build, in its order (below), and of a forget
    forget      `index forget`'s ledger transaction: entries removed, what they alone used with them
    sizes       what each repository and branch takes on disk (`index status`)
    lexical, lexindex, team, lease, usage, status: as their docstrings say (health, the
                analysis and rendering of usage records, is codevouch/health/, above the store)
Chroma: per (repository, embedding model) one collection of vectors, keyed by text hash and
shared by every branch (see "Many branches"). With CODEVOUCH_CHROMA_URL=http://HOST:PORT the
vectors live on a Chroma server (`chroma run`) instead of chroma/; the ledger stays in the
index directory. Other packages import the names below from `codevouch.store`.

Why two stores: Chroma has no transactions, SQLite has. Vectors are written to Chroma
first, under ids that the ledger does not know yet, so readers ignore them; one SQLite
transaction then makes the new state visible at once; obsolete vectors are removed last.
A build killed at any moment therefore leaves the previous state readable, and ids it
left behind are listed in `pending` so the next build removes what was never committed.
Chunk text is not stored: it is read back from git by blob id (Chroma is ~5x larger
with documents, and git already has the bytes).

Many branches: a chunk's identity is its content (path, blob id, position), so the branches
of a repository that share a file version share its chunk rows, stored once per repository
("space": `space_blobs` per file version, `space_chunks` per chunk). Vectors go one level
further: one per distinct embedded text (`space_texts`, Chroma id = the text's hash), and one
lexical row per distinct (path, symbol, text), so a branch that edits one function of a big
file adds that function's vector and terms, not the file's. A branch is its `files` rows: a
chunk belongs to the branch when the branch's row for the chunk's path carries the chunk's
blob (live), or carried it when the file left the branch (history); a vector or lexical hit
comes back as each of the branch's chunks with that text, with the branch's own path, lines,
symbol and commit. Searches ask the shared collection for more neighbours (in proportion to
the branch's share of it) and keep the branch's members, with no Chroma `where` filter
(100-350 ms at 100k vectors). A file version no branch references any more is garbage: its
rows go in the build's transaction, with the texts and lexical rows no other chunk uses;
their vectors after it.
"""

from codevouch.store.indexdir import IndexDir
from codevouch.store.ledger import Ledger, models_in_use
from codevouch.store.locks import writer_lock
from codevouch.store.naming import (
    chunk_id,
    collection_base,
    default_index_dir,
    lex_key,
    space_name,
)
from codevouch.store.records import BranchState, BuildChange, ChunkRecord, Committed, FileRow, NewChunk, Outdated
from codevouch.store.settings import StoreSettings
from codevouch.store.vectors import VectorStore

__all__ = [
    "BranchState", "BuildChange", "ChunkRecord", "Committed", "FileRow", "IndexDir", "Ledger",
    "NewChunk", "Outdated", "VectorStore", "chunk_id", "collection_base", "default_index_dir", "lex_key", "models_in_use",
    "StoreSettings", "space_name", "writer_lock",
]
