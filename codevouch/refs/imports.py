"""check-refs for a file that a line of Ruby, Lua or shell imports (`require "billing/invoice"`,
`require_relative "money"`, `require "billing.ledger"`, `source lib/common.sh`), read by the
language's own pattern (spec.Imports, refs/extract.py's `language_imports`). Pure: the working
tree's file list comes in.

A file named from the importing file's directory (`./x`, `../x`, `require_relative`) is looked up
there when the answer says which file imports (a patch), else by its ending; one named from a
load path is at the root or under any directory (`lib/`, `lua/`). Not found: missing when the
name is relative or its directory is one of the repository's; else a library's (external).
"""
from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection

from codevouch.refs.extract import Reference
from codevouch.refs.model import RefResult
from codevouch.syntax import registry


def check_file_import(ref: Reference, files: Collection[str], added: Collection[str],
                      similar: Callable[[str], str | None]) -> RefResult:
    """`ref` (an import of a file, `ref.language` set) against the working tree's `files` and the
    ones the patch `added`; `similar(path)`: a suggestion for a missing one."""
    lang = registry.by_name()[ref.language or ""]
    assert lang.imports is not None
    spec = ref.module or ""
    relative = spec.startswith(("./", "../"))
    name = spec if relative or not lang.imports.dotted else spec.replace(".", "/")
    forms = [name, *(name + suffix for suffix in lang.imports.suffixes)]
    base = posixpath.dirname(ref.base) if relative and ref.base is not None else None
    found = _located(forms, base, files, added)
    if found is not None:
        kind = "added-by-patch" if found in added else "module-found"
        return RefResult(ref, kind, f"{spec} is {found}.", found=found)
    if relative or _local_directory(name, files):
        want = posixpath.normpath(posixpath.join(base or "", forms[-1] if len(forms) > 1 else forms[0]))
        beside = f" beside {ref.base}" if base is not None else ""
        return RefResult(ref, "module-missing", f"{spec}: no file {' or '.join(dict.fromkeys(forms))} in the "
                         f"working tree{beside}.", suggestion=similar(want))
    return RefResult(ref, "module-external", f"{spec} is no file of this repository (a library's, most likely).")


def _located(forms: list[str], base: str | None, files: Collection[str], added: Collection[str]) -> str | None:
    """The file one of `forms` names: from `base` (the importing file's directory) or the root;
    with no base, also under any directory (`lib/`, `lua/`), the first in path order."""
    for start in ([base] if base is not None else []) + [""]:
        for form in forms:
            candidate = posixpath.normpath(posixpath.join(start, form))
            if not candidate.startswith("../") and (candidate in files or candidate in added):
                return candidate
    if base is not None:
        return None
    for form in forms:
        ending = "/" + posixpath.normpath(form).lstrip("./")
        found = sorted(f for f in (*files, *added) if f.endswith(ending))
        if found:
            return found[0]
    return None


def _local_directory(name: str, files: Collection[str]) -> bool:
    """The import's directory (`billing` of `billing/refunds`) is one of the repository's."""
    directory = posixpath.dirname(posixpath.normpath(name)).lstrip("./")
    return bool(directory) and any(f.startswith(directory + "/") or f"/{directory}/" in f for f in files)
