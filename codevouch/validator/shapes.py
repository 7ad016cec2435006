"""What other tools hand over, read as the validator's snippets: one item at a time, by its shape.

Beside codevouch's own snippet JSON (`{"path": ...}`, which a plain `{path, start_line, end_line,
text}` without a commit already is), two shapes are read as they come out of their libraries:

- a LangChain Document: `page_content`, `metadata.source` (or `file_path`), `metadata.start_index`;
  as `Document.model_dump()` gives it (`id`, `type: "Document"`), or serialized by
  `langchain_core.load.dumpd` (`{"lc": 1, "type": "constructor", "kwargs": {...}}`);
- a LlamaIndex node: `text`, `metadata.file_path` (or `file_name`), `start_char_idx`; as
  `TextNode.model_dump()` / `to_dict()` gives it (`id_`, `class_name`, `extra_info` when dumped
  by alias), a Document's `text_resource`, or a `NodeWithScore` (`{"node": {...}, "score": ...}`).

`auto` tells the shape of each item apart (`detect`); a named format forces one. An item that
fits none, or not the forced one, raises InputError naming the missing or wrong field as that
shape spells it (a node's "start_char_idx", a Document's "metadata.start_index"): the caller
(`validator.validate_items`) turns that into a verdict for that item alone.

The pipeline filters (codevouch/integrations) hand live objects to validate_items in these shapes.
Metadata of another tool's making is not ours: a `commit` that is no object id, a `start_line`
that is a string, is left out rather than refused.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from codevouch.errors import InputError
from codevouch.validator.parse import checked_offset

INPUT_FORMATS: tuple[str, ...] = ("auto", "codevouch", "langchain", "llamaindex")

_HEX = re.compile(r"[0-9a-fA-F]{7,64}")
_EXTRA: dict[str, Callable[[Any], bool]] = {
    "commit": lambda v: isinstance(v, str) and bool(_HEX.fullmatch(v)),
    "blob_sha": lambda v: isinstance(v, str) and bool(_HEX.fullmatch(v)),
    "start_line": lambda v: type(v) is int and v >= 1,
    "end_line": lambda v: type(v) is int and v >= 1,
    "symbol": lambda v: isinstance(v, str) and bool(v),
    "branch": lambda v: isinstance(v, str) and bool(v),
}
# Keys only a LlamaIndex node (or its NodeWithScore) has beside its "text".
_NODE_KEYS = ("id_", "class_name", "start_char_idx", "end_char_idx", "metadata", "extra_info")
_SHAPES = ('a codevouch snippet needs "path"; a LangChain Document "page_content" and '
           '"metadata.source"; a LlamaIndex node "text" and "metadata.file_path"')


@dataclass(frozen=True)
class Window:
    """One pipeline item as the validator reads it: where it claims to be, and its text."""
    path: str
    text: str
    start_char: int | None = None
    extra: Mapping[str, Any] | None = None     # commit, blob_sha, start_line, end_line, when given

    def snippet(self, commit: str | None = None) -> dict[str, Any]:
        item: dict[str, Any] = {"path": self.path, "text": self.text}
        if self.start_char is not None:
            item["start_index"] = self.start_char
        for key, fits in _EXTRA.items():
            value = (self.extra or {}).get(key)
            if fits(value):      # another tool's metadata of another shape is not ours: left out
                item[key] = value
        if commit and "commit" not in item:
            item["commit"] = commit
        return item


def fits(key: str, value: Any) -> bool:
    """Whether `value` is of the form the validator reads for the metadata key `key` (commit,
    blob_sha, start_line, end_line, symbol, branch)."""
    return _EXTRA[key](value)


def langchain_window(content: str, metadata: Mapping[str, Any]) -> Window:
    """A LangChain Document's window; its path "" when the metadata names none."""
    return Window(file_path(metadata.get("source") or metadata.get("file_path")), content,
                  offset(metadata.get("start_index")), metadata)


def llamaindex_window(text: str, metadata: Mapping[str, Any], start_char_idx: Any) -> Window:
    """A LlamaIndex node's window; its path "" when the metadata names none."""
    return Window(file_path(metadata.get("file_path") or metadata.get("file_name")), text,
                  offset(start_char_idx), metadata)


def offset(value: Any) -> int | None:
    """A character offset as the libraries give it: an int (not a bool), else none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def file_path(value: Any) -> str:
    """A path as a loader wrote it (a string or a Path): a `file://` URL as its path
    (percent-decoded); "" for none."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        return ""
    if value.startswith("file://"):
        url = urlsplit(value)
        if url.netloc in ("", "localhost"):
            return unquote(url.path)
    return value


def detect(item: Mapping[str, Any]) -> str | None:
    """The shape of one item: "langchain", "codevouch", "llamaindex", or None for none of them."""
    if "page_content" in item or _serialized(item) is not None:
        return "langchain"
    if "path" in item:
        return "codevouch"
    node = _node(item)
    if ("text" in node or "text_resource" in node) and any(key in node for key in _NODE_KEYS):
        return "llamaindex"
    return None


def read(item: Any, where: str, input_format: str = "auto") -> Any:
    """The item as a codevouch snippet (for check_snippet), by its shape or the forced one.
    InputError, prefixed with `where`, names the missing field and what to give."""
    if not isinstance(item, Mapping):
        return item             # check_snippet says what it is instead of an object
    shape = detect(item) if input_format == "auto" else input_format
    if shape == "langchain":
        return _langchain(item, where, forced=input_format != "auto")
    if shape == "llamaindex":
        return _llamaindex(item, where, forced=input_format != "auto")
    if shape is None:
        raise InputError(f"{where}: missing \"path\", and it is no LangChain Document or LlamaIndex node "
                         f"either: {_SHAPES}.")
    path = item.get("path")
    if isinstance(path, str) and path.startswith("file://"):
        return {**item, "path": file_path(path)}     # a file:// URL is read as its path, in every shape
    return item


def item_id(item: Mapping[str, Any]) -> str | None:
    """The id an item carried, to map a verdict back to it: a LangChain Document's `id`, a
    LlamaIndex node's `id_`, any item's own string `id`; None without one."""
    for value in ((_serialized(item) or {}).get("id"), item.get("id"), _node(item).get("id_")):
        if isinstance(value, str) and value:
            return value
    return None


def _langchain(item: Mapping[str, Any], where: str, forced: bool) -> dict[str, Any]:
    doc = _serialized(item) or item
    content = doc.get("page_content")
    if not isinstance(content, str):
        what = "missing \"page_content\"" if content is None else "\"page_content\" is not a string"
        raise InputError(f"{where}: {what}{_not_forced('a LangChain Document', forced)}; a Document carries "
                         "its text in \"page_content\" and its file in \"metadata.source\".")
    window = langchain_window(content, _metadata(doc.get("metadata"), where))
    if not window.path:
        raise InputError(f"{where}: a LangChain Document without \"metadata.source\" (or \"file_path\"): "
                         "put the file's path there, relative to the repository or absolute inside it, "
                         "as LangChain's loaders do.")
    checked_offset(window.start_char, "metadata.start_index", where)   # the user's field, not ours
    return window.snippet()


def _llamaindex(item: Mapping[str, Any], where: str, forced: bool) -> dict[str, Any]:
    node = _node(item)
    text = node.get("text")
    resource = node.get("text_resource")
    if text is None and isinstance(resource, Mapping):      # a Document dumped without "text"
        text = resource.get("text")
    if not isinstance(text, str):
        what = "missing \"text\"" if text is None else "\"text\" is not a string"
        raise InputError(f"{where}: {what}{_not_forced('a LlamaIndex node', forced)}; a node carries its "
                         "text in \"text\" and its file in \"metadata.file_path\".")
    metadata = _metadata(node.get("metadata") if "metadata" in node else node.get("extra_info"), where)
    window = llamaindex_window(text, metadata, node.get("start_char_idx"))
    if not window.path:
        raise InputError(f"{where}: a LlamaIndex node without \"metadata.file_path\" (or \"file_name\"): "
                         "put the file's path there, relative to the repository or absolute inside it, "
                         "as SimpleDirectoryReader does.")
    checked_offset(window.start_char, "start_char_idx", where)
    return window.snippet()


def _serialized(item: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Document inside LangChain's serialized form (`dumpd`), else None."""
    kwargs = item.get("kwargs")
    if item.get("lc") is not None and isinstance(kwargs, Mapping) and "page_content" in kwargs:
        return kwargs
    return None


def _node(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """The node inside a NodeWithScore, else the item itself."""
    node = item.get("node")
    return node if isinstance(node, Mapping) else item


def _metadata(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{where}: \"metadata\" must be an object, got {type(value).__name__}.")
    return value


def _not_forced(what: str, forced: bool) -> str:
    return f" (the input format says {what})" if forced else ""

