"""What the front door answers with: `Hit` (one search hit), `Hits` (a search's answer),
`ContextPack` (a context call's answer), and `Learned`, what one search found out from git and
the ledger for its validation and usage record. `codevouch.api` re-exports the public ones.

Plain data over the features' own types (validator, retriever, context): nothing here runs a
search, opens the store or loads a model, so `import codevouch` stays cheap.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from codevouch.validator import to_json
from codevouch.validator.gather import Known
from codevouch.validator.model import Checked, Current, Snippet, Validated
from codevouch.vocabulary import CURRENT_VERDICTS, Verdict

if TYPE_CHECKING:
    from codevouch.context.pack import Pack
    from codevouch.context.windows import Budget
    from codevouch.retriever.overlay import Overlay
    from codevouch.retriever.search import Results
    from codevouch.store import BranchState, ChunkRecord
    from codevouch.worktree.files import CallSettings
    from codevouch.worktree.gitio import HeadState


@dataclass(frozen=True)
class Hit:
    """One search hit: the indexed chunk, its score, its text and (when validated) its check.

    `verdict`, `reason`, `citation` and `current` are None when the search ran with
    validate=False. `code` is what an agent may use as current code: the working-tree text
    for usable and stale-but-ok hits, the re-read current definition for a historical hit
    whose symbol still exists, otherwise None. `matched`: what found it, strongest first:
    "definition-name" (it defines a name the query spells), "lexical", "dense", and "stand-in"
    (a working-tree chunk the dense list ranked with its indexed version's vector: only the
    score is borrowed, the text and check are the current ones; docs/OVERLAY.md).
    """
    record: ChunkRecord
    score: float
    text: str
    check: Validated | None = None
    matched: tuple[str, ...] = ()
    # The cosine of the query's and the chunk's vectors: comparable across queries (unlike
    # `score`, a rank fusion, 1.0 for whatever ranked first); None in lexical mode.
    similarity: float | None = None
    # Whether the query spells the hit's symbol: its qualified name or last component
    # (case-insensitive, `Client.send` for `send`), or the same words (`raise for status`).
    name_match: bool = False
    # Whether this hit is a good match: its name matched, or its similarity reaches the model's
    # measured threshold (Settings.match_threshold); None when that cannot be told (lexical
    # mode or a model without a threshold, and no name match).
    good_match: bool | None = None

    @property
    def path(self) -> str:
        return self.record.path

    @property
    def symbol(self) -> str:
        return self.record.symbol

    @property
    def verdict(self) -> str | None:
        return self.check.verdict if self.check else None

    @property
    def reason(self) -> str | None:
        return self.check.reason if self.check else None

    @property
    def citation(self) -> str | None:
        return self.check.citation if self.check else None

    @property
    def current(self) -> Current | None:
        return self.check.current if self.check else None

    @property
    def code(self) -> str | None:
        if self.check is None or self.check.verdict == Verdict.EXCLUDED:
            return None
        if self.check.current is not None:
            return self.check.current.text
        return self.text if self.check.verdict in CURRENT_VERDICTS else None

    def snippet(self) -> dict[str, Any]:
        """The hit as a validator snippet (what `search --json --no-validate` prints)."""
        out = asdict(self.record)
        return {**out, "score": round(self.score, 4), "matched": list(self.matched), "text": self.text,
                "similarity": round(self.similarity, 4) if self.similarity is not None else None,
                "name_match": self.name_match, "good_match": self.good_match}

    def _for_validator(self) -> Checked:
        """The hit as the validator takes it, parsed already: its JSON (passed through to the
        output) and its Snippet, made from the record (no JSON parsed back)."""
        return self.snippet(), Snippet.of_record(self.record, self.text)

    def to_json(self) -> dict[str, Any]:
        """The hit's one JSON form: what `search --json` prints, the MCP server's search answers
        with and the engine passes on. The snippet (`snippet()`: the record's fields, score,
        matched, text, similarity, name_match, good_match, which `validate` takes back), and when
        validated: verdict, reason, detail, current and citation, `code` (what an agent may use
        as current code, None when nothing may be) and, for a historical-only hit only,
        `reference_text` (its old text: reference, never current code)."""
        if self.check is None:
            return self.snippet()
        out = {**to_json(self.check), "code": self.code}
        if self.check.verdict == Verdict.HISTORICAL_ONLY:
            out["reference_text"] = self.text
        return out


@dataclass(frozen=True)
class Learned:
    """What one search learned from git and the ledger, handed to its validation (`facts`) and
    its usage record (`head`, `state`) so that neither asks again."""
    head: HeadState | None
    state: BranchState | None
    facts: Known | None
    call: CallSettings                  # the repository's config and rules, loaded once for the call

    @classmethod
    def of(cls, candidates: Results, call: CallSettings) -> Learned:
        """The search's knowledge (its head, state and overlay status). The validator gets it
        only when the search's HEAD is the work tree's: the top, HEAD's commit and (when the
        overlay took one) the status."""
        head, ov = candidates.head, candidates.overlay
        facts = Known(head.root, head.commit, ov.status if ov is not None else None,
                      ov.hashes if ov is not None else {}, rules_of=call.rules) if head is not None else None
        return cls(head, candidates.state, facts, call)


class Hits(list[Hit]):
    """`Index.search`'s answer: the hits, best first, and `overlay`, what the working tree held
    that the index did not (codevouch.retriever.overlay.Overlay; None with overlay=False):
    `overlay.note()` is the one line to show when the index is behind, `overlay.summary()` the data."""

    def __init__(self, hits: Iterable[Hit], overlay: Overlay | None = None, known: Learned | None = None) -> None:
        super().__init__(hits)
        self.overlay = overlay
        self.known = known      # what the search learned from git, for the usage record (private)

    @property
    def no_good_match(self) -> bool:
        """True when hits came back but none is a good match (`Hit.good_match` False for every
        one): the CLI then says so in one line instead of showing them as answers."""
        return bool(self) and all(h.good_match is False for h in self)

    def note(self) -> str | None:
        """The one line that says nothing matched well, else None."""
        if not self.no_good_match:
            return None
        best = max(h.similarity or 0.0 for h in self)
        return (f"no good match: the closest of {len(self)} hit{'s' if len(self) != 1 else ''} has similarity "
                f"{best:.2f}, below this model's threshold for a match; try other words or a name")


@dataclass(frozen=True)
class ContextPack:
    """A markdown pack for an agent, the validated snippets it was made from, the budget it
    fits and its report (`pack.included`, `pack.left_out`, `manifest()` for --json)."""
    markdown: str
    results: tuple[Validated, ...]
    pack: Pack
    budget: Budget
    overlay: Overlay | None = None
    no_good_match: bool = False     # the search's hits are all weak (Hits.no_good_match): the report says so

    @property
    def tokens(self) -> int:
        return self.pack.tokens

    def manifest(self) -> dict[str, Any]:
        """The report as data: budget, index commit, what went in and what was left out, and why,
        and the working-tree overlay's summary (None when it was off)."""
        return {**self.pack.manifest(), "budget": self.budget.to_json(),
                "overlay": self.overlay.summary() if self.overlay is not None else None,
                "no_good_match": self.no_good_match}
