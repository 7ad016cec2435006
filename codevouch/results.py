"""What the front door answers with: `Hit` (one search hit), `Hits` (a search's answer),
`ContextPack` (a context call's answer), and `Learned`, what one search found out from git and
the ledger for its validation and usage record. `codevouch.api` re-exports the public ones.

Plain data over the features' own types (validator, retriever, context): nothing here runs a
search, opens the store or loads a model, so `import codevouch` stays cheap.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from codevouch.errors import InputError
from codevouch.syntax.lines import cut_text
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
    from codevouch.syntax.outline import Members
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
    # `score`, a fusion of each list scaled by its best: relative to this query's lists); None in lexical mode.
    similarity: float | None = None
    # Whether the query spells the hit's symbol: its qualified name or last component
    # (case-insensitive, `Client.send` for `send`), or the same words (`raise for status`).
    name_match: bool = False
    # Whether this hit is a good match: its name matched, or its similarity reaches the model's
    # measured threshold (Settings.match_threshold); None when that cannot be told (lexical
    # mode or a model without a threshold, and no name match).
    good_match: bool | None = None
    # A container whose members lie beyond the code this hit shows (a class's header chunk): its
    # header and each member's signature, read from the working-tree file (Index.search).
    outline: Members | None = None

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
        del out["declaration"]    # a ranking fact, not part of the snippet `validate` takes back
        return {**out, "score": round(self.score, 4), "matched": list(self.matched), "text": self.text,
                "similarity": round(self.similarity, 4) if self.similarity is not None else None,
                "name_match": self.name_match, "good_match": self.good_match}

    def _for_validator(self) -> Checked:
        """The hit as the validator takes it, parsed already: its JSON (passed through to the
        output) and its Snippet, made from the record (no JSON parsed back)."""
        return self.snippet(), Snippet.of_record(self.record, self.text)

    def to_json(self, fields: Sequence[str] | None = None, max_chars: int | None = None) -> dict[str, Any]:
        """The hit's one JSON form: what `search --json` prints, the MCP server's search answers
        with and the engine passes on; each piece of code in it once (docs/SEARCH.md, "One
        request, one hit form"). The snippet (`snippet()`: the record's fields, score, matched,
        text, similarity, name_match, good_match, which `validate` takes back), and when
        validated: verdict, reason, detail, current (where the current code is: path, lines,
        symbol), citation and `code` (what an agent may use as current code, None when nothing
        may be). `text`, the indexed text, is left out when it is `code` exactly (`validate`
        then reads it there); `outline` when the hit has one.

        max_chars: at most that many characters of code in the hit (`code`, then the outline,
        then `text`; HIT_CHARS is the CLI's and MCP's default), each cut at a line's end, and
        `cut` says what was cut and which lines were not shown. fields: only those keys
        (check_fields)."""
        out = self.snippet() if self.check is None else self._checked()
        if self.outline is not None:
            o = self.outline
            out["outline"] = {"symbol": o.name, "start_line": o.start, "end_line": o.end, "text": o.text}
        if max_chars:
            self._cap(out, max_chars)
        return {k: out[k] for k in fields if k in out} if fields else out

    def _checked(self) -> dict[str, Any]:
        out = {**to_json(self.check), "code": self.code}    # type: ignore[arg-type]  # checked
        if out.get("current"):
            # Its text is `code` (Hit.code): only where it is goes here.
            out["current"] = {k: v for k, v in out["current"].items() if k != "text"}
        if self.code is not None and out.get("text") == self.code:
            del out["text"]
        return out

    def _cap(self, out: dict[str, Any], max_chars: int) -> None:
        """The hit's code within `max_chars` (code first, then the outline, then the indexed text),
        with a `cut` entry for each piece cut: its lines, the last one shown and where the rest is."""
        left = max_chars
        cuts = []
        cur = self.current
        for name, (path, start, end) in (
                ("code", (cur.path, cur.start_line, cur.end_line) if cur is not None else self._lines()),
                ("outline", (cur.path, 0, 0) if cur is not None else self._lines()), ("text", self._lines())):
            holder = out.get(name)
            text = holder.get("text") if name == "outline" and isinstance(holder, dict) else holder
            if not isinstance(text, str):
                continue
            kept = cut_text(text, left) if left > 0 else ("", 0)
            if kept is None:
                left -= len(text)
                continue
            if isinstance(holder, dict):      # the outline
                out[name] = {**holder, "text": kept[0]}
                start, end = holder["start_line"], holder["end_line"]
            else:
                out[name] = kept[0]
            left -= len(kept[0])
            # An outline's lines are not the file's: its entry names the container's lines.
            cuts.append(cut_entry(name, path, start, end, kept[1] if name != "outline" else 0, len(text)))
        if cuts:
            out["cut"] = cuts

    def _lines(self) -> tuple[str, int, int]:
        return self.record.path, self.record.start_line, self.record.end_line


# The CLI's and the MCP search tool's default bound on the code in one hit, in characters
# (about 1,000 tokens of code): an agent can plan for k hits; `cut` says where the rest is.
HIT_CHARS = 4000

# What `--fields` (the MCP tool's `fields`) may keep of a hit: every key its JSON form can hold.
HIT_FIELDS: tuple[str, ...] = (
    "id", "repo", "path", "branch", "commit", "commit_date", "symbol", "start_line", "end_line", "indexed_at",
    "blob_sha", "text_hash", "kind", "language", "status", "origin", "score", "matched", "text", "similarity",
    "name_match", "good_match", "verdict", "reason", "detail", "current", "citation", "code", "outline", "cut")


def check_fields(names: Sequence[str] | None) -> tuple[str, ...] | None:
    """The fields to keep of each hit, in the JSON form's order (a name may come comma-separated:
    `code,citation`); None keeps all. InputError names an unknown one and the choices."""
    if not names:
        return None
    wanted = {part.strip() for name in names for part in name.split(",") if part.strip()}
    unknown = sorted(wanted - set(HIT_FIELDS))
    if unknown or not wanted:
        raise InputError(f"unknown hit field {unknown[0] if unknown else '(none)'!r} in --fields; "
                         f"choose from: {', '.join(HIT_FIELDS)}.")
    # `cut` goes with any code field: a cut hit must say so whatever else was asked for.
    if wanted & {"code", "text", "outline"}:
        wanted.add("cut")
    return tuple(f for f in HIT_FIELDS if f in wanted)


def cut_entry(name: str, path: str, start: int, end: int, whole: int, chars: int) -> dict[str, Any]:
    """One `cut` entry: field `name` held lines start..end of `path` (`chars` characters); the
    first `whole` of them are shown whole (0: part of the first line only)."""
    shown_end = start + whole - 1
    rest = f"{path}#L{max(start, shown_end + 1)}-L{end}"
    return {"field": name, "path": path, "start_line": start, "end_line": end,
            "shown_end_line": shown_end if whole else None, "chars": chars, "rest": rest}


def hits_text(answer: Mapping[str, Any]) -> str:
    """A search answer (`{"hits": [Hit.to_json(), ...], "note", "overlay", ...}`, the MCP search
    tool's) as a model reads it: each hit's citation, score and code once, in a fence; its outline
    and what a cap cut. The MCP server's text content beside the same data, structured."""
    hits = answer.get("hits") or []
    lines = [f"note: {n}" for n in ((answer.get("overlay") or {}).get("note"), answer.get("note"),
                                    (answer.get("gone") or {}).get("note")) if n]
    lines.append(f"{len(hits)} hit{'s' if len(hits) != 1 else ''}"
                 + (f", {len(answer['excluded'])} excluded" if answer.get("excluded") else "")
                 + " (the same hits, every field, are this answer's structured content)")
    lines += [_hit_block(number, h) for number, h in enumerate(hits, 1)]
    return "\n\n".join(lines) + "\n"


def _hit_block(number: int, h: Mapping[str, Any]) -> str:
    """One hit of hits_text: its citation, similarity, code, indexed text, outline and cuts."""
    from codevouch.validator.render import code_block

    where = f"{h.get('path')}#L{h.get('start_line')}-L{h.get('end_line')} ({h.get('symbol')})"
    block = [f"[{number}] {h.get('citation') or where}"]
    if isinstance(h.get("similarity"), float):
        good = h.get("good_match")
        block.append(f"similarity: {h['similarity']:.2f}"
                     + (" (good match)" if good is True else " (weak)" if good is False else ""))
    path = str((h.get("current") or {}).get("path") or h.get("path") or "")
    if isinstance(h.get("code"), str):
        block.append(code_block(path, h["code"]))
    if isinstance(h.get("text"), str):
        label = "indexed text" if h.get("code") is not None or "verdict" not in h else \
            "historical text, reference only: do not implement against it"
        block += [f"{label}:", code_block(str(h.get("path") or ""), h["text"])]
    if isinstance(h.get("outline"), dict):
        o = h["outline"]
        block += [f"outline of {o.get('symbol')} (L{o.get('start_line')}-L{o.get('end_line')}): its members",
                  code_block(path, str(o.get("text")))]
    block += cut_lines(h)
    return "\n".join(block)


def cut_lines(answer: Mapping[str, Any]) -> list[str]:
    """One line per `cut` entry of a JSON answer (a hit, a gone definition): what was not shown."""
    return [f"cut: {c.get('field')} holds {c.get('chars')} characters; not shown: {c.get('rest')}"
            for c in answer.get("cut") or () if isinstance(c, dict)]


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

    def __init__(self, hits: Iterable[Hit], overlay: Overlay | None = None, known: Learned | None = None,
                 gone: Sequence[ChunkRecord] = ()) -> None:
        super().__init__(hits)
        self.overlay = overlay
        self.known = known      # what the search learned from git, for the usage record (private)
        # The indexed definitions of the name the query spells, when it is defined nowhere in the
        # working tree now (deleted or renamed since the build): `gone_note()` says so.
        self.gone = tuple(gone)

    def gone_note(self) -> str | None:
        """The line that says the query's name existed at the indexed commit and is gone now, with
        where it was; None when it is not so."""
        if not self.gone:
            return None
        names = sorted({r.symbol for r in self.gone})
        where = "; ".join(f"{r.path}#L{r.start_line}-L{r.end_line} at {r.branch}@{r.commit[:7]}" for r in self.gone[:3])
        return (f"{', '.join(names)} was defined at the indexed commit ({where}) and is gone from the working "
                "tree now; no hit below defines it")

    def gone_summary(self) -> dict[str, Any] | None:
        """gone_note's facts as data: each indexed definition (symbol, path, lines, commit, branch)."""
        if not self.gone:
            return None
        return {"note": self.gone_note(), "definitions": [
            {"symbol": r.symbol, "path": r.path, "start_line": r.start_line, "end_line": r.end_line,
             "commit": r.commit, "branch": r.branch} for r in self.gone]}

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
