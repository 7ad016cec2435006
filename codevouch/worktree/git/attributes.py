"""What .gitattributes says about paths, in one `check-attr` per call: the linguist-generated
and linguist-vendored marks, and the `filter` attribute of paths whose configured filter
codevouch does not run (their working-tree hash is not what `git add` would store).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from codevouch.worktree.git._process import run_filters
from codevouch.worktree.git.filters import filter_names
from codevouch.worktree.git.runner import run

LINGUIST_ATTRIBUTES = ("linguist-generated", "linguist-vendored")


def linguist_marks(repo: Path, paths: Iterable[str], commit: str | None = None) -> dict[str, str]:
    """path -> "generated" or "vendored" for the paths that .gitattributes marks
    `linguist-generated` or `linguist-vendored` (set, or `=true`), in one `check-attr` call.

    commit=None: the working tree's .gitattributes (validation). A commit's own
    .gitattributes are read through a temporary index outside the repository (`check-attr
    --source` needs git 2.40), so the repository is not written.
    """
    return marks_of(path_attributes(repo, paths, LINGUIST_ATTRIBUTES, commit))


def marks_of(attributes: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """linguist_marks from path_attributes' answer (LINGUIST_ATTRIBUTES among those asked)."""
    marks: dict[str, str] = {}
    for path, values in attributes.items():
        for attr in LINGUIST_ATTRIBUTES:
            if values.get(attr) in ("set", "true"):
                marks.setdefault(path, "generated" if attr == "linguist-generated" else "vendored")
    return marks


def unrun_filters(repo: Path, attributes: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """path -> filter driver for the paths whose `filter` attribute (from path_attributes, with
    "filter" asked) names a driver the configuration defines and codevouch does not run: their
    working-tree hash is not what `git add` would store."""
    if run_filters():
        return {}
    configured = set(filter_names(repo))
    return {path: values["filter"] for path, values in attributes.items()
            if values.get("filter") in configured}


def path_attributes(repo: Path, paths: Iterable[str], attrs: Iterable[str],
                    commit: str | None = None) -> dict[str, dict[str, str]]:
    """path -> {attribute: value} for the attributes that are set (not `unspecified`), in one
    `check-attr` call; commit as for linguist_marks."""
    wanted = [p for p in dict.fromkeys(paths) if p and "\0" not in p]
    names = list(attrs)
    if not wanted or not names:
        return {}
    import tempfile

    with tempfile.TemporaryDirectory(prefix="codevouch-attr-") as tmp:
        env = None
        if commit is not None:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            run(repo, "read-tree", commit, env=env)
        out = run(repo, "check-attr", *(["--cached"] if commit is not None else []), "--stdin", "-z",
                  *names, stdin="\0".join(wanted).encode("utf-8", "surrogateescape") + b"\0", env=env)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, dict[str, str]] = {}
    for i in range(0, len(fields) - 2, 3):
        path, attr, value = fields[i:i + 3]
        if value != "unspecified":
            found.setdefault(path, {})[attr] = value
    return found
