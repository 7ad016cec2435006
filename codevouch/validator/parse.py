"""Reading snippets: a JSON list or JSON lines in, checked dicts out (InputError otherwise)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from codevouch import environment
from codevouch.errors import InputError
from codevouch.validator.model import Snippet

_HEX = re.compile(r"[0-9a-fA-F]{7,64}")   # git abbreviates to 7 at least
_STR_FIELDS = ("commit", "blob_sha", "text", "symbol", "branch", "commit_date", "indexed_at", "origin")
_SURROGATE = re.compile("[\ud800-\udfff]")
# No file codevouch reads (a few MB at most) has this many lines: a larger line number is an
# input error, not a range to look for.
MAX_LINE = 2**31 - 1
_FIX = "each snippet must be a JSON object with at least a non-empty string \"path\""
# Snippets one call takes (~6 s) when its caller gives no cap: CODEVOUCH_MAX_SNIPPETS's default.
MAX_SNIPPETS: int = environment.MAX_SNIPPETS.default
# The longest value a snippet's field may hold, checked before any work on it (check_snippet: the
# CLI, the MCP tool, Index.validate and the LangChain and LlamaIndex filters all come through it).
# A path: PATH_MAX, the most the kernel takes (`a/` x 50,000 took 91 s; no file has such a name).
# A text: the CLI's whole input cap (CODEVOUCH_MAX_INPUT_BYTES's default; one 50 MB text over MCP
# gave no answer in 60 s). Any other string field (a symbol, a branch, a date): a path's length.
MAX_PATH_CHARS = 4096
MAX_TEXT_CHARS: int = environment.MAX_INPUT_BYTES.default
# What each kind of field may hold, and what to do instead: a path, a text, any other string.
_LONGEST = {"path": (MAX_PATH_CHARS, "no file has a longer path (PATH_MAX); give the file's repository-relative path."),
            "text": (MAX_TEXT_CHARS, "validate the text in parts (a chunk, a window), not a whole file this size."),
            "value": (MAX_PATH_CHARS, "give the field's own short value, or drop it.")}


def _default_cap() -> int:
    return MAX_SNIPPETS


def parse_snippets(text: str, cap: Callable[[], int] = _default_cap) -> list[dict[str, Any]]:
    """Snippets from a JSON list, a single JSON object, or JSON lines; [] for empty input.
    Every item must be a codevouch snippet: the first that is not raises InputError. `cap()`:
    the most snippets taken (the caller's CODEVOUCH_MAX_SNIPPETS), asked when the text is not empty."""
    items, where = _parsed(text, cap)
    for n, item in items:
        check_snippet(item, f"input {where} {n}")
        no_lone_surrogates(item, f"input {where} {n}")
    return [item for _, item in items]


def parse_items(text: str, cap: Callable[[], int] = _default_cap) -> list[Any]:
    """The items of a JSON list, a single JSON object, or JSON lines, unchecked ([] for empty
    input): each is read by its shape later (shapes.py), and one that is wrong is that item's
    error alone. InputError only for what is not JSON, or more items than `cap()` (as in
    parse_snippets)."""
    return [item for _, item in _parsed(text, cap)[0]]


def _parsed(text: str, most: Callable[[], int]) -> tuple[list[tuple[int, Any]], str]:
    """(number, item) pairs, numbered as the error messages count them (items of a list, lines
    of JSON lines), and which of the two that is."""
    stripped = text.strip()
    if not stripped:
        return [], "item"
    cap = most()
    if stripped.startswith("{"):
        # One (possibly pretty-printed) object; if that fails it is JSON lines, parsed below.
        try:
            single = _loads(stripped)
        except json.JSONDecodeError:
            single = None
        if isinstance(single, dict):
            return [(1, single)], "item"
    if stripped.startswith("["):
        try:
            data = _loads(stripped)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"input line {_line_in(text, stripped, exc.pos)}: invalid JSON ({exc.msg}); "
                f"give a JSON list of snippet objects, or one JSON object per line.") from exc
        if isinstance(data, list):
            _at_most(len(data), cap)
            return list(enumerate(data, 1)), "item"
        return [(1, data)], "item"
    items: list[tuple[int, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        _at_most(len(items) + 1, cap)
        try:
            items.append((n, _loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(
                f"input line {n}: invalid JSON ({exc.msg} at column {exc.colno}); give one "
                f"JSON object per line (JSON lines) or a single JSON list.") from exc
    return items, "line"


def _at_most(count: int, cap: int) -> None:
    """InputError once the input holds more snippets than the cap (1M took 63 s and 4.6 GB)."""
    if count > cap:
        raise InputError(f"more than {cap} snippets in one call (the cap, CODEVOUCH_MAX_SNIPPETS); "
                         "validate them in smaller batches, or raise the cap.")


def no_lone_surrogates(item: Mapping[str, Any], where: str) -> None:
    """JSON's \\ud800-\\udfff escapes decode to lone surrogates: not text, and not printable."""
    for key in ("path", *_STR_FIELDS):
        _whole_unicode(item.get(key), key, where)


def _whole_unicode(value: Any, key: str, where: str) -> None:
    # ASCII (most code) holds no surrogate: the C-speed test spares the regex.
    if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
        raise InputError(f"{where}: \"{key}\" holds a lone surrogate (an unpaired \\ud800-\\udfff "
                         "escape), which is not valid Unicode; fix the program that wrote it.")


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        # json's decoder recurses once per nesting level: 100,000 `[` exhaust the stack.
        raise InputError("input is nested too deeply to be snippets; give a JSON list of snippet "
                         "objects, or one JSON object per line.") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        # Python's int-string limit (a number of more than 4,300 digits), said in its words: no
        # field of a snippet is such a number.
        raise InputError(f"input holds a number JSON cannot read here ({exc}); give line numbers and "
                         "offsets as ordinary integers.") from None


def _line_in(text: str, stripped: str, pos: int) -> int:
    offset = text.index(stripped[:1]) if stripped else 0
    return text.count("\n", 0, offset + pos) + 1


def check_snippet(item: Any, where: str) -> Snippet:
    """The validated, normalized view of one snippet; InputError says what is wrong and where.

    The checks run in a fixed order (the object, "path", the string fields, the object ids, the
    line numbers, their order), so a snippet with several faults always reports the same one."""
    if type(item) is not dict and not isinstance(item, Mapping):   # the ABC check is the slow one
        raise InputError(f"{where}: expected a JSON object, got {_kind(item)}; {_FIX}.")
    get = item.get
    _bounded(get, where)
    path = _checked_path(get("path"), where)
    values = _checked_strings(get, where)
    start, end = _checked_line(get("start_line"), "start_line", where), _checked_line(get("end_line"), "end_line", where)
    if start is not None and end is not None and end < start:
        raise InputError(f"{where}: \"end_line\" ({end}) is before \"start_line\" ({start}).")
    text, start, end = _span(_text_of(item, values["text"], where), start, end)
    start_char = _checked_offset(get, where)
    return Snippet(path=path, commit=_lower(values["commit"]), blob_sha=_lower(values["blob_sha"]),
                   text=text, symbol=values["symbol"], start_line=start, end_line=end,
                   branch=values["branch"], commit_date=values["commit_date"],
                   indexed_at=values["indexed_at"], origin=values["origin"], start_char=start_char)


def _bounded(get: Callable[[str], Any], where: str) -> None:
    """InputError naming the first string field longer than it may be (MAX_PATH_CHARS,
    MAX_TEXT_CHARS), before anything is done with it."""
    for key in ("path", *_STR_FIELDS):
        _short_enough(get(key), key, key if key in _LONGEST else "value", where)


def _short_enough(value: Any, key: str, what: str, where: str) -> None:
    most, instead = _LONGEST[what]
    if isinstance(value, str) and len(value) > most:
        raise InputError(f"{where}: \"{key}\" is {len(value)} characters long, over the {most} a snippet's {what} "
                         f"may have; {instead}")


def _text_of(item: Mapping[str, Any], text: str | None, where: str) -> str | None:
    """The snippet's text. A search hit leaves out its indexed `text` where it is its `code`
    exactly (results.Hit.to_json): then `code` holds it. Text a size cap cut (a `cut` entry
    names the field) is not the chunk's: the hit is checked by its version and lines alone."""
    cut = item.get("cut")
    were_cut = {c.get("field") for c in cut if isinstance(c, Mapping) and isinstance(c.get("field"), str)} \
        if isinstance(cut, list) else set()
    if text is not None:
        return None if "text" in were_cut else text
    code = item.get("code")
    if isinstance(code, str) and code and item.get("verdict") is not None and "code" not in were_cut:
        _short_enough(code, "code", "text", where)
        _whole_unicode(code, "code", where)
        return code
    return None


OFFSET_FIELDS = ("start_index", "start_char_idx")   # LangChain's, LlamaIndex's spelling


def _checked_offset(get: Callable[[str], Any], where: str) -> int | None:
    """A character offset of the text in its file: "start_index" or "start_char_idx", a
    non-negative integer (a bool is not one), or None; both given, they must agree."""
    found: int | None = None
    for key in OFFSET_FIELDS:
        value = checked_offset(get(key), key, where)
        if value is None:
            continue
        if found is not None and value != found:
            raise InputError(f"{where}: \"start_index\" ({found}) and \"start_char_idx\" ({value}) "
                             "disagree; give one character offset.")
        found = value
    return found


def checked_offset(value: Any, key: str, where: str) -> int | None:
    """One character offset: a non-negative integer (a bool is not one) no larger than MAX_LINE,
    or None; InputError names `key`, the field as the caller spelled it."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0
                              or value > MAX_LINE):
        raise InputError(f"{where}: \"{key}\" must be a character offset (an integer, 0 or more) "
                         f"or null, got {str(value)[:40]!r}.")
    return value


def _checked_path(path: Any, where: str) -> str:
    """"path": a string, not empty nor only white space."""
    if type(path) is not str:
        if path is None:
            raise InputError(f"{where}: missing \"path\"; {_FIX}.")
        if not isinstance(path, str):
            raise InputError(f"{where}: \"path\" must be a string, got {_kind(path)}; {_FIX}.")
    if not path or path.isspace():      # `not path.strip()`, without building the stripped copy
        raise InputError(f"{where}: \"path\" is empty; {_FIX}.")
    return path


def _checked_strings(get: Callable[[str], Any], where: str) -> dict[str, str | None]:
    """The string fields (_STR_FIELDS), "" as None; then commit and blob_sha must be object ids."""
    values: dict[str, Any] = {}
    for key in _STR_FIELDS:
        value = get(key)
        if value is not None and type(value) is not str and not isinstance(value, str):
            raise InputError(f"{where}: \"{key}\" must be a string or null, got {_kind(value)}.")
        values[key] = value or None   # "" carries no information: same as absent
    for key in ("commit", "blob_sha"):
        value = values[key]
        if value is not None and not _HEX.fullmatch(value):
            raise InputError(f"{where}: \"{key}\" must be a hexadecimal object id (7-64 hex digits), "
                             f"got {value[:80]!r}; drop the field if it is unknown.")
    return values


def _checked_line(value: Any, key: str, where: str) -> int | None:
    """A line number: a positive integer (a bool is not one) no larger than MAX_LINE, or None."""
    if value is not None and (type(value) is not int or value < 1) \
            and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InputError(f"{where}: \"{key}\" must be a positive integer (1-based) or null, "
                         f"got {value!r}.")
    if value is not None and value > MAX_LINE:
        raise InputError(f"{where}: \"{key}\" ({str(value)[:30]}{'...' if len(str(value)) > 30 else ''}) is "
                         f"beyond any file's length (at most {MAX_LINE}); line numbers are 1-based.")
    return value


def _span(text: str | None, start: int | None, end: int | None) -> tuple[str | None, int | None, int | None]:
    """(text, start, end) with the text's final "\\n" dropped where the lines say it only ends the
    last line, and a missing end (or start) told from the other and the text's lines (no I/O)."""
    if text is not None and text.endswith("\n") and start is not None and end is not None \
            and end - start + 1 == text.count("\n"):
        # Lines say the final "\n" only terminates the last line (other tools' style), not an
        # empty last line as in a codevouch chunk: match without it.
        text = text[:-1]
    if start is not None and end is None:
        end = start if text is None else start + text.count("\n")
    if end is not None and start is None:
        start = end if text is None else max(1, end - text.count("\n"))
    return text, start, end


def _lower(value: str | None) -> str | None:
    return value.lower() if value else None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
