"""`Index.show`, `Index.references`, `Index.outline`: the navigation methods `codevouch.Index`
takes from this mixin (api.py holds the rest of the front door)."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from codevouch.call import in_call
from codevouch.request import SearchRequest

if TYPE_CHECKING:
    from codevouch.call import Call
    from codevouch.navigate.outline import Outline
    from codevouch.navigate.references import References
    from codevouch.navigate.show import Shown, Target
    from codevouch.results import Hits


class _Index(Protocol):
    repo: Path
    call: Call

    def _search(self, request: SearchRequest) -> Hits: ...


class Navigation:
    """Definitions and uses as the working tree has them at the moment of the call."""

    @in_call
    def show(self: _Index, name: str, branch: str | None = None) -> Shown:
        """The current code of the definitions `name` spells (`cancel_order`, `OrderService.cancel_order`,
        `PATH#NAME`, `PATH:START-END` for the definition that holds those lines), each a `Hit`
        whose `code` is read from the working tree now; found live when written since the build.
        `Shown.gone`: defined when indexed and nowhere now (`hits.gone` says where it was)."""
        from codevouch.navigate.show import show, target_of
        from codevouch.worktree import gitio

        root = gitio.repo_root(self.repo)
        limit = _limit(root)

        def search(t: Target) -> Hits:
            # The private search: no usage record for a lookup whose hits are not what is shown.
            return self._search(SearchRequest.of(t.name, k=50, branch=branch, mode="lexical",
                                                 paths=[_literal(t.path)] if t.path else None))
        return show(root, target_of(root, name, limit, lambda p: _given(self.call, p)), search, limit)

    @in_call
    def references(self: _Index, name: str, limit: int = 200) -> References:
        """Where `name` is used in the working tree now (uncommitted files included, deleted ones
        not): calls, imports, inheritance and type uses, each with its line, enclosing definition
        and `exact` or `by-name`; at most `limit`, with a note when there were more."""
        from codevouch.navigate.references import references
        from codevouch.worktree import gitio

        root = gitio.repo_root(self.repo)
        return references(root, name, limit, _limit(root))

    @in_call
    def outline(self: _Index, path: str) -> Outline:
        """What `path` defines now (kind, qualified name, signature, lines), read from the working
        tree; a directory: each file's top-level definitions. InputError for a path outside the
        repository, ignored by git or not a regular file."""
        from codevouch.navigate.outline import outline_path
        from codevouch.worktree import gitio

        root = gitio.repo_root(self.repo)
        return outline_path(root, _given(self.call, path), _limit(root))


def _literal(path: str) -> str:
    """A repo-relative path as a gitignore pattern that matches it alone (`--path`'s syntax)."""
    return "/" + re.sub(r"([\\\[\]*?!#])", r"\\\1", path)


def _given(call: Call, path: str) -> str:
    """A path as the caller named it: from the caller's directory when something is there (the
    CLI's rule), else from the repository's top (an agent's paths)."""
    named = call.path(path)
    return str(named) if os.path.lexists(named) else path


def _limit(root: Path) -> int:
    from codevouch.worktree.files import load_worktree_rules

    return load_worktree_rules(root).max_file_bytes
