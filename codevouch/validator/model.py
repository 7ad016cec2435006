"""The validator's data: a normalized snippet, the verdict vocabulary (`Verdict`, defined in
codevouch/vocabulary.py where the store can read it too, and its reasons), and the results."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codevouch.vocabulary import Kind, Verdict

if TYPE_CHECKING:
    from codevouch.store import ChunkRecord


VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)

@dataclass(frozen=True)
class Reason:
    """One reason code: the verdict it gives and its words, defined once (docs/VALIDATION.md's table
    and the citation's `check:` phrase come from here; tests hold that page to it)."""
    verdict: Verdict
    check: str                # the phrase on the citation's `check:` line
    meaning: str              # one sentence for people: docs/VALIDATION.md's reason table
    note: str | None = None   # added to the `source:` line ("file deleted")


_U, _S, _H, _E = Verdict.USABLE, Verdict.STALE_BUT_OK, Verdict.HISTORICAL_ONLY, Verdict.EXCLUDED

# Stable machine codes, in the order docs/VALIDATION.md lists them.
REASONS: dict[str, Reason] = {
    "same-commit": Reason(_U, "file identical to the working tree",
                          "indexed at HEAD and the file is unchanged in the working tree (or its blob id matches)"),
    "same-worktree": Reason(_U, "cut from the working tree, file unchanged since",
                            "an uncommitted snippet (a search hit from the working tree) whose file is "
                            "unchanged since it was cut"),
    "same-content": Reason(_S, "older version, content identical",
                           "indexed at another commit or branch; the working-tree file has the same git blob id"),
    "chunk-moved": Reason(_S, "older version, chunk text unchanged in the working tree",
                          "the file changed but the chunk's exact text is still there as whole lines; "
                          "`current` gives where"),
    "text-found": Reason(_S, "no version metadata; text found verbatim in the working tree",
                         "no commit or blob id, but the text is in the current file as whole lines"),
    "file-renamed": Reason(_S, "file renamed, content identical",
                           "the file is gone from its path, and a working-tree file has its exact content "
                           "(the same git blob id): renamed, by git's rename detection or a plain `mv`; "
                           "`current` points there", "file renamed"),
    "moved-elsewhere": Reason(_S, "code moved to another file, text unchanged",
                              "the symbol left its file (or the file is gone), and its exact text is "
                              "defined under the same name in another file; `current` points there"),
    "content-changed": Reason(_H, "the code changed since this version",
                              "the chunk's text is gone but its symbol exists; `current` is the symbol's code now",
                              "changed"),
    "moved-and-changed": Reason(_H, "code moved to another file and changed",
                                "the symbol left its file and another file defines its name, but not with the "
                                "snippet's text under the same qualified name; `current` is that code", "moved"),
    "symbol-removed": Reason(_H, "symbol no longer exists in this file",
                             "the symbol is not in the file any more (if the chunk's lines survive inside "
                             "other code, `current` points there)", "symbol removed"),
    "text-mismatch": Reason(_H, "snippet text does not match its version; altered, do not trust",
                            "the metadata says the file is unchanged, but the snippet's text is not in it: "
                            "altered, do not trust", "altered text"),
    "commit-gone": Reason(_H, "commit no longer in the repository; cannot check",
                          "the commit was force-pushed away and the snippet has no blob id or text to check",
                          "commit gone"),
    "file-deleted": Reason(_H, "file no longer exists",
                           "the file no longer exists in the working tree", "file deleted"),
    "path-never-existed": Reason(_H, "no such file, now or in the snippet's version",
                                 "the path is not in the working tree, nor in the snippet's commit (without "
                                 "a commit: nor anywhere in HEAD's history): never there, as opposed to "
                                 "deleted", "no such file"),
    "unknown-blob": Reason(_H, "blob id unknown to this repository; version metadata is wrong",
                           "the snippet's blob id is not its file's blob at its commit, and the repository "
                           "has no such object", "unknown blob"),
    "lines-out-of-range": Reason(_H, "line range outside the file",
                                 "the snippet's lines are past the end of its version of the file (or of the "
                                 "working-tree file; without a commit or blob id, of the working-tree file even "
                                 "when its text is elsewhere in it): there is nothing there to vouch for", "lines out of range"),
    "not-a-file": Reason(_H, "path is not a regular file",
                         "the path exists but is a directory, FIFO, socket, device or symlink loop, or is "
                         "unreadable; nothing was read", "not a file"),
    "too-large": Reason(_H, "file over the size cap; not read",
                        "the working-tree file is larger than `max_file_bytes` (1 MB unless configured): "
                        "it is not indexed, and it was not read, so nothing was checked", "too large"),
    "renamed-and-changed": Reason(_H, "file renamed and changed",
                                  "git's rename detection (snippet commit → working tree) found the new path, "
                                  "but its content differs from the snippet's version; `current` is the code "
                                  "there now", "file renamed"),
    "no-version-metadata": Reason(_H, "no version metadata; text not found in the working tree",
                                  "no commit or blob id, and the text is not in the current file (or the "
                                  "snippet carries no text)"),
    "not-on-this-machine": Reason(_H, "not on this machine: checked against the indexed commit only",
                                  "the repository is indexed but has no working tree on this machine (a "
                                  "teammate's, through a team index; a clone moved or removed since its build): "
                                  "the text was read at the indexed commit's blob, from a clone here that holds "
                                  "that commit, and nothing says it is current", "not on this machine"),
    "not-on-this-machine-nor-commit": Reason(_H, "not on this machine, nor is its indexed commit: nothing checked",
                                             "the repository has no working tree on this machine and no clone here "
                                             "holds its indexed commit: the text could not be read or checked; the "
                                             "citation says where it was indexed", "not on this machine"),
    "generated": Reason(_E, "generated code", "generated code by the repository's rules (a path pattern "
                                              "or a marker like @generated); `detail` names the rule"),
    "vendored": Reason(_E, "vendored code", "vendored third-party code by the repository's rules"),
    "backup": Reason(_E, "backup copy", "a backup or editor copy by the repository's rules"),
    "fixture": Reason(_E, "fixture data", "test fixture or snapshot data by the repository's rules"),
    "ignored": Reason(_E, "ignored by git; not read",
                      "the file is ignored by git's rules (`.gitignore`, `.git/info/exclude`, "
                      "`core.excludesFile`) and not tracked; nothing was read"),
    "outside-repo": Reason(_E, "path outside the repository; not read",
                           "the path leaves the repository (`..`, absolute elsewhere, a symlink out, "
                           "inside `.git`, a NUL byte); nothing was read"),
    "malformed-input": Reason(_E, "input item not understood; nothing read",
                              "the item fits no input shape (or not the one the call forced), or a field of it "
                              "is malformed; `detail` names the field and what to give; nothing was read, and "
                              "the call's other items are still judged"),
}

# The reasons of a search hit whose repository has no working tree here (validator.not_on_this_machine):
# given without the facts decide() reads, as MALFORMED is.
NOT_HERE = ("not-on-this-machine", "not-on-this-machine-nor-commit")
# The reason of an input item that could not be read (validator.validate_items): the CLI exits 2.
MALFORMED = "malformed-input"

# reason code -> its verdict's string (an Enum's .value costs more than the lookup: asked per snippet)
_VERDICT_OF: dict[str, str] = {code: reason.verdict.value for code, reason in REASONS.items()}

# an excluded kind (worktree/rules.py) -> its reason code
KIND_REASON: dict[str, str] = {Kind.GENERATED: "generated", Kind.VENDOR: "vendored",
                               Kind.BACKUP: "backup", Kind.FIXTURE: "fixture"}


@dataclass(frozen=True)
class Snippet:
    """The fields the validator reads from one input item (others are passed through)."""
    path: str
    commit: str | None = None
    blob_sha: str | None = None
    text: str | None = None
    symbol: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    branch: str | None = None
    commit_date: str | None = None
    indexed_at: str | None = None
    # "uncommitted": cut from the working tree at query time (the overlay, no commit);
    # "committed": at a commit made after the index was built; None or "index": from the index
    origin: str | None = None
    # A character offset of the text in its version of the file (a splitter's `start_index`,
    # LlamaIndex's `start_char_idx`): a position beside or instead of the lines (validator/verbatim.py).
    start_char: int | None = None

    @classmethod
    def of_record(cls, rec: ChunkRecord, text: str) -> Snippet:
        """An indexed chunk (a search hit) as the validator reads it, with no JSON in between:
        what `check_snippet` makes of the hit's JSON. An empty field counts as absent; ids
        are lower-cased. (A record's own fields need no checking, and a chunk's text, its
        lines joined, never ends in the extra newline `check_snippet` drops.)"""
        return cls(path=rec.path, commit=rec.commit.lower() or None, blob_sha=rec.blob_sha.lower() or None,
                   text=text or None, symbol=rec.symbol or None, start_line=rec.start_line,
                   end_line=rec.end_line, branch=rec.branch or None, commit_date=rec.commit_date or None,
                   indexed_at=rec.indexed_at or None, origin=rec.origin or None)

    @property
    def has_version(self) -> bool:
        return bool(self.commit or self.blob_sha)


# An input item already parsed: the item as given (its fields pass through to the output) and
# its Snippet. A search hit is one: its JSON and Snippet.of_record, so the hit is never parsed back.
Checked = tuple[Mapping[str, Any], Snippet]


@dataclass(frozen=True)
class Current:
    """Where the up-to-date code is in the working tree (text read from the working tree)."""
    path: str
    start_line: int
    end_line: int
    text: str
    symbol: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "text": self.text, "symbol": self.symbol}


@dataclass(frozen=True)
class Decision:
    """A reason code (its verdict follows from REASONS), the sentence for this snippet, and
    where the up-to-date code is."""
    reason: str
    detail: str
    current: Current | None = None

    @property
    def verdict(self) -> str:
        return _VERDICT_OF[self.reason]


@dataclass(frozen=True)
class Validated:
    """One input snippet (as given, untouched) with its decision and citation header."""
    snippet: Mapping[str, Any]
    parsed: Snippet
    verdict: str
    reason: str
    detail: str
    current: Current | None
    citation: str
    # Where the item was in the call's input (0-based) and the id it carried (a LangChain
    # Document's `id`, a LlamaIndex node's `id_`): set by `validate_items`, None otherwise.
    position: int | None = None
    item_id: str | None = None
