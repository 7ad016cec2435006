"""What check-refs reports: statuses, reason codes (defined once), one result per reference."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from codevouch.refs.extract import Reference

STATUSES = ("ok", "missing", "unknown", "refused")

# Stable reason codes: status, and what the code means (docs/CHECK_REFS.md's table follows this).
REASONS: dict[str, tuple[str, str]] = {
    "path-exists": ("ok", "the file exists in the working tree"),
    "lines-in-file": ("ok", "the file exists and has the cited lines"),
    "path-resolved": ("ok", "no file at that exact path, but exactly one file ends with it; `found` names it"),
    "path-ambiguous": ("ok", "no file at that exact path, but several files end with it (which one is meant "
                             "is not known, so lines are not checked)"),
    "added-by-patch": ("ok", "the patch itself adds this file"),
    "symbol-defined": ("ok", "defined in the working tree; `found` says where"),
    "symbol-mentioned": ("ok", "not defined in this repository, but the name occurs in its files "
                               "(a library's name, a variable, generated code)"),
    "module-found": ("ok", "the import resolves to a module of this repository"),
    "module-external": ("ok", "the import's top-level package is not part of this repository"),
    "path-missing": ("missing", "no such file, and git history has no file by that name"),
    "path-renamed": ("missing", "the file was renamed (git rename detection); the suggestion names the new path"),
    "path-deleted": ("missing", "the file was deleted; the detail names the commit"),
    "lines-past-end": ("missing", "the cited lines run past the end of the file"),
    "path-unreadable": ("unknown", "the file exists but could not be read; its lines were not checked"),
    "path-too-large": ("unknown", "the file is larger than `max_file_bytes` (1 MB unless configured); it "
                                  "was not read, so its lines were not checked"),
    "symbol-moved": ("missing", "the answer says where the symbol is (`name` in path#L..), but it is "
                                "defined elsewhere; the suggestion says where it is now"),
    "symbol-missing": ("missing", "the name was defined at HEAD or in history but is not defined now"),
    "member-missing": ("missing", "the class or module exists but has no such member; the suggestion names "
                                  "a near member, or where a member by that name is defined"),
    "qualifier-missing": ("missing", "`Owner.member` where the owner (class, module or receiver) is neither "
                                     "defined nor named beside the member, but the member is defined elsewhere "
                                     "in this repository: the suggestion says where"),
    "module-missing": ("missing", "the package is this repository's, but the module is not in it"),
    "name-missing": ("missing", "the module exists but neither defines nor imports the name"),
    "symbol-unknown": ("unknown", "defined and mentioned nowhere in this repository or its history: "
                                  "a name from elsewhere, or invented"),
    "path-ignored": ("refused", "the file is ignored by git (`.gitignore`, `.git/info/exclude`, "
                                "`core.excludesFile`) and not tracked; nothing was read"),
    "outside-repo": ("refused", "the path leaves the repository; nothing was read"),
}


@dataclass(frozen=True)
class RefResult:
    """One reference and what the working tree says about it.

    status: ok, missing, unknown or refused (from `reason`). found: where it is now
    (`path#L10-L20`), when known. suggestion: what to cite instead ("renamed to ...",
    "now at ...", "did you mean ...").
    """
    ref: Reference
    reason: str
    detail: str
    found: str | None = None
    suggestion: str | None = None

    @property
    def status(self) -> str:
        return REASONS[self.reason][0]

    def to_json(self) -> dict[str, Any]:
        ref = {k: v for k, v in asdict(self.ref).items() if v is not None}
        return {**ref, "status": self.status, "reason": self.reason, "detail": self.detail,
                "found": self.found, "suggestion": self.suggestion}


@dataclass(frozen=True)
class RefReport:
    """Every reference of one answer, checked, in the answer's order; `skipped`: (path, why)
    for each working-tree file the search for names left out (over the size cap)."""
    results: tuple[RefResult, ...]
    skipped: tuple[tuple[str, str], ...] = ()

    def having(self, status: str) -> list[RefResult]:
        return [r for r in self.results if r.status == status]

    @property
    def missing(self) -> list[RefResult]:
        return self.having("missing")

    def passed(self, strict: bool = False) -> bool:
        """No reference is missing (strict: and none is unknown or refused either)."""
        bad = ("missing", "unknown", "refused") if strict else ("missing",)
        return not any(r.status in bad for r in self.results)

    def counts(self) -> dict[str, int]:
        return {s: len(self.having(s)) for s in STATUSES}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"counts": self.counts(), "references": [r.to_json() for r in self.results]}
        if self.skipped:
            out["skipped"] = [{"path": p, "reason": why} for p, why in self.skipped]
        return out
