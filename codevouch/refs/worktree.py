"""The working tree and its history as check-refs reads them: lazily, each file at most once.

Every working-tree read goes through the validator's path check (`validator.paths.locate`)
first, so nothing outside the repository is read; history comes from `gitio` in batches.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

from codevouch.printable import plural
from codevouch.syntax.lines import decode
from codevouch.validator.symbols import definitions
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge, load_worktree_rules, over_cap, read_text
from codevouch.worktree.paths import locate

Definitions = dict[str, list[tuple[int, int]]]


class WorkTree:
    """The working tree and its history, read lazily and at most once per check."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._texts: dict[str, str | None] = {}
        self._too_large: dict[str, TooLarge] = {}
        self._defs: dict[tuple[str | None, str], Definitions] = {}
        # Files git ignores (rel -> the rule), found before any is read: never read here.
        self.ignored: dict[str, str] = {}

    @cached_property
    def files(self) -> list[str]:
        return gitio.worktree_files(self.root)

    @cached_property
    def file_set(self) -> frozenset[str]:
        return frozenset(self.files)

    @cached_property
    def head(self) -> str | None:
        return gitio.head_commit(self.root)

    @cached_property
    def modules(self) -> dict[str, str]:
        """Python module name -> file (or package directory), rooted at the repository and at
        each top-level package (so `src/shop/cancel.py` is both `src.shop.cancel` and `shop.cancel`)."""
        return _python_modules(self.files)

    def stored_form(self, rel: str) -> str | None:
        """The working-tree file that `rel` names in another Unicode normal form (an answer
        writes `café.py` precomposed, the file was created decomposed), else None."""
        want = unicodedata.normalize("NFC", rel)
        if want.isascii():
            return None
        found = [f for f in self.files if not f.isascii() and unicodedata.normalize("NFC", f) == want]
        return found[0] if len(found) == 1 else None

    @cached_property
    def huge(self) -> frozenset[str]:
        """The working-tree files over the size cap: never read, and left out of every grep
        (see too_large_note)."""
        return over_cap(self.root, self.files, self.max_file_bytes)

    @cached_property
    def huge_text(self) -> frozenset[str]:
        """`huge` less the binary files that are no source (git's test: a NUL in the first 8,000
        bytes; no language of ours by its name): an image or an archive holds no name a reference
        could cite, so leaving it out is not worth a word. A source file over the cap is named,
        whatever it holds."""
        from codevouch.syntax.languages import detect_language

        return frozenset(p for p in self.huge if detect_language(p) is not None or not _binary(self.root / p))

    def too_large_note(self) -> str:
        """What a search of the working tree's text did not see ("" when nothing was left out)."""
        if not self.huge_text:
            return ""
        shown = sorted(self.huge_text)
        more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
        return (f" Not searched: {plural(len(shown), 'file')} over the {self.max_file_bytes}-byte cap (max_file_bytes), "
                f"skipped as too large: {', '.join(shown[:3])}{more}.")

    @cached_property
    def max_file_bytes(self) -> int:
        """The size cap on reads (the repository's rules, as the validator reads them)."""
        return load_worktree_rules(self.root).max_file_bytes

    def text(self, rel: str) -> str | None:
        """A working-tree file's text, only after locate() put it inside the repository;
        None when it cannot be read or is over the size cap (see too_large)."""
        if rel not in self._texts:
            loc = locate(self.root, rel)
            found = read_text(self.root, loc.real, self.max_file_bytes) \
                if loc.inside and loc.exists and loc.real and rel not in self.ignored \
                and loc.real not in self.ignored else None
            if isinstance(found, TooLarge):
                self._too_large[rel], found = found, None
            self._texts[rel] = found
        return self._texts[rel]

    def too_large(self, rel: str) -> TooLarge | None:
        """Why text(rel) was None, when the file is over the size cap."""
        return self._too_large.get(rel)

    def defs(self, rel: str, commit: str | None = None) -> Definitions:
        """Definitions of a file in the working tree (commit=None) or at a commit."""
        key = (commit, rel)
        if key not in self._defs:
            text = self.text(rel) if commit is None else self.blob_texts(commit, [rel]).get(rel)
            self._defs[key] = definitions(text, rel) if text else {}
        return self._defs[key]

    def blob_texts(self, commit: str, rels: Iterable[str]) -> dict[str, str]:
        """The text of files at a commit, in two git processes whatever their number."""
        wanted = [f"{commit}:{rel}" for rel in rels]
        found = {expr: sha for expr, (sha, kind) in gitio.batch_check(self.root, wanted).items() if kind == "blob"}
        data = gitio.read_blobs(self.root, found.values())
        return {expr.split(":", 1)[1]: decode(data[sha]) for expr, sha in found.items() if sha in data}

    def prefetch(self, commit: str, rels: Iterable[str]) -> None:
        """Parse the definitions of many files at a commit, reading them in one batch."""
        todo = [rel for rel in rels if (commit, rel) not in self._defs]
        for rel, text in self.blob_texts(commit, todo).items():
            self._defs[(commit, rel)] = definitions(text, rel)
        for rel in todo:
            self._defs.setdefault((commit, rel), {})

    def exists_at(self, commit: str, rel: str) -> bool:
        return f"{commit}:{rel}" in gitio.batch_check(self.root, [f"{commit}:{rel}"])


def module_of(path: str) -> str:
    stem = path[:-len(".py")] if path.endswith(".py") else path.removesuffix(".pyi")
    return stem.removesuffix("/__init__").replace("/", ".")


def _python_modules(files: Iterable[str]) -> dict[str, str]:
    """Python module name -> file, or package directory (ending with '/') for a namespace package."""
    found = sorted(f for f in files if f.endswith((".py", ".pyi")))
    packages = {f[:-len("/__init__.py")] for f in found if f.endswith("/__init__.py")}
    modules: dict[str, str] = {}
    dirs: dict[str, str] = {}
    for f in found:
        parts = module_of(f).split(".")
        # Rooted at the repository, and at the topmost package (the first directory down the
        # path that has an __init__.py all the way to the file), or the file's own directory.
        top = len(parts) - 1
        while top > 0 and "/".join(parts[:top]) in packages:
            top -= 1
        for start in dict.fromkeys((0, top)):
            modules.setdefault(".".join(parts[start:]), f)
            for i in range(start + 1, len(parts)):
                dirs.setdefault(".".join(parts[start:i]), "/".join(parts[:i]) + "/")
    return {**dirs, **modules}


def _binary(path: Path) -> bool:
    """Whether the regular file at `path` looks binary as git judges it (a NUL byte among its
    first 8,000); False when it cannot be opened as one (never follows a link, never blocks)."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and b"\0" in os.read(fd, 8000)
    except OSError:
        return False
    finally:
        os.close(fd)
