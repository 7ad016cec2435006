"""`codevouch mcp`: the index's tools for agents over MCP (stdio), a thin client of `codevouch.Index`.

    server = create_server(Path("."), allow_build=False)
    server.run("stdio")

Tools: search, show, references, outline, context (the markdown pack), validate, status, health, check_refs; with allow_build,
build (under the index's writer lock). Needs the optional extra: `pip install -e '.[mcp]'` in a checkout.

- One repository per server, fixed at start. Paths that tools receive are checked by the
  validator's path rules: nothing outside the repository is read.
- Every call opens the index afresh, so a build that lands while the server runs is seen next.
- Calls run one at a time, and between them the rest of a big working-tree overlay is embedded
  in the background, as the resident engine does (retriever/resident.py).
- An answer's data is its structured content; its text content, what most clients show a model,
  is that data's JSON, but a search's is its hits written once each (results.hits_text).
- A CodevouchError becomes a tool error with its message; a bad argument is refused with one
  sentence per argument naming it and what it accepts (argument_errors); `build` without
  --allow-build says the server is read-only; anything else is a failed call, never a crash.
"""
from __future__ import annotations

import atexit
import functools
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field

from codevouch.api import KINDS, Index
from codevouch.errors import InputError
from codevouch.health.status import ages
from codevouch.mcp_calls import serve_tool
from codevouch.navigate.show import shown_text
from codevouch.navigate.tools import NAVIGATION_NOTE, NavigationTools
from codevouch.printable import faithful, has_lone_surrogate, json_text, visible
from codevouch.request import MOST_BUDGET, ContextRequest, SearchRequest
from codevouch.results import HIT_CHARS, HIT_FIELDS, check_fields, hits_text
from codevouch.retriever.resident import Resident
from codevouch.vocabulary import Verdict

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

T = TypeVar("T")

Query = Annotated[str, Field(min_length=1, max_length=2000, description="What to look for, in words or code.")]
# The CLI's range (commands/common.LimitOpt): one range at every door.
K = Annotated[int, Field(ge=1, le=200, description="Number of hits.")]
Branch = Annotated[str | None, Field(max_length=250, description="Branch to search (default: the current one).")]
# The Literals spell INDEXED_KINDS and SearchMode for the input schema (a test holds them equal).
Kinds = Annotated[list[Literal["source", "test", "docs", "config"]] | None,
                  Field(description=f"Only hits of these file kinds ({', '.join(KINDS)}).")]
History = Annotated[bool, Field(description="Also return chunks of files deleted from the branch "
                                            "(always marked historical-only).")]
Overlay = Annotated[bool, Field(description="Also search, live, the files that changed in the working tree "
                                            "since the last build (default true).")]
Paths = Annotated[list[Annotated[str, Field(min_length=1, max_length=500)]] | None, Field(
    max_length=50, description="Only files these gitignore-style globs match ('src/', '*.py', '!src/vendor/').")]
Mode = Annotated[Literal["hybrid", "dense", "lexical"], Field(description="hybrid (default), dense or lexical.")]
Fields = Annotated[list[Literal[HIT_FIELDS]] | None, Field(description="Only these fields of each hit.")]  # type: ignore[valid-type]
MaxChars = Annotated[int, Field(ge=0, le=10_000_000, description="Most characters of code per hit (0: no cap).")]
# Spells validator/shapes.py's INPUT_FORMATS (a test holds them equal).
InputFormat = Annotated[Literal["auto", "codevouch", "langchain", "llamaindex"], Field(
    description="How to read the items: auto (the default) tells the shapes apart per item; the others "
                "read every item as that shape.")]

_INSTRUCTIONS = (
    "codevouch searches this repository's index and checks every hit against the working tree. "
    "Use `code` of usable and stale-but-ok hits; a historical-only hit is reference only: never "
    "implement against it. Run check_refs on an answer before giving it, to catch cited paths, "
    "lines and symbols that do not exist." + NAVIGATION_NOTE)


class Tools(NavigationTools):
    """The tool bodies: each opens `Index` afresh and returns plain JSON data."""

    def __init__(self, repo: Path, index_dir: Path | None, embedder: str | None = None) -> None:
        self.repo = repo
        self.index_dir = index_dir
        self.embedder = embedder
        # The warm state the resident engine keeps too: calls one at a time, and between them the
        # rest of a big overlay embedded in the background (its lines go to stderr, the log).
        self.resident = Resident(_log)

    def _call(self, fn: Callable[[Index], T]) -> T:
        """`fn` on this call's Index of the server's repository (mcp_calls.serve_tool: errors as tool errors)."""
        return serve_tool(self.resident, lambda call: fn(Index(self.repo, self.index_dir, embedder=self.embedder,
                                                                call=call, background=False)))

    def search(self, query: Query, k: K = 10, branch: Branch = None, kinds: Kinds = None,
               include_history: History = False, mode: Mode = "hybrid", overlay: Overlay = True,
               paths: Paths = None, fields: Fields = None, max_chars: MaxChars = HIT_CHARS) -> dict[str, Any]:
        """Search the index and check every hit against the working tree: a citation and a verdict
        each. `code` is current code to use (null for historical-only: its old `text` is for ideas
        only); `text`, as indexed, appears only where it differs from `code`: pass a hit as it is to
        validate. A class's header hit has an `outline`; a hit over `max_chars` is cut and `cut`
        names the lines left out. `overlay`: how far the index is behind the working tree (changed
        files are searched live). `no_good_match` (with `note`): treat the hits as guesses; `gone`:
        the name was defined at the indexed commit and is gone now. Excluded hits are counted."""
        keep = check_fields(fields)
        hits = self._call(lambda idx: idx.search(SearchRequest.of(
            query, k=k, branch=branch, kinds=kinds, include_history=include_history, mode=mode, overlay=overlay,
            paths=paths)))
        shown = [h for h in hits if h.verdict != Verdict.EXCLUDED]
        excluded = [{"path": h.path, "reason": h.reason} for h in hits if h.verdict == Verdict.EXCLUDED]
        return {"hits": [h.to_json(keep, max_chars) for h in shown], "excluded": excluded,
                "overlay": hits.overlay.summary() if hits.overlay is not None else None,
                "no_good_match": hits.no_good_match, "note": hits.note(), "gone": hits.gone_summary()}

    def context(self, query: Query, k: K = 10, branch: Branch = None, kinds: Kinds = None,
                include_history: History = False,
                budget: Annotated[int | None, Field(ge=1, le=MOST_BUDGET, description=(
                    "Token budget for the pack (default: from model, else the configured default)."))] = None,
                model: Annotated[str | None, Field(max_length=200, description=(
                    "Model name from the registry: the budget is its safe input size."))] = None,
                reserve: Annotated[float | None, Field(ge=0, le=0.99, description=(
                    "Fraction of the model's window kept free (default 0.10)."))] = None,
                overlay: Overlay = True, paths: Paths = None) -> str:
        """A markdown context pack for the query that fits a token budget (`budget` tokens, or
        the safe input size of `model`): current code first with citation headers, historical
        snippets only with include_history and while room remains, never excluded code; it ends
        with a report of what was left out and why."""
        return self._call(lambda idx: idx.context(ContextRequest.of(
            query, k=k, branch=branch, kinds=kinds, include_history=include_history, budget=budget, model=model,
            reserve=reserve, overlay=overlay, paths=paths)).markdown)

    def validate(self, snippets: Annotated[list[dict[str, Any]], Field(
                     min_length=1, max_length=1000,
                     description="Snippets from any tool: objects with at least `path` (`commit`, "
                                 "`blob_sha`, `symbol`, `start_line`, `end_line`, `text`, `start_index` "
                                 "are used when present), LangChain Documents (`page_content`, "
                                 "`metadata.source`, `metadata.start_index`) or LlamaIndex nodes "
                                 "(`text`, `metadata.file_path`, `start_char_idx`), as their "
                                 "model_dump() gives them.")],
                 strict: Annotated[bool, Field(description="Re-hash every file, even on the fast path.")] = False,
                 input_format: InputFormat = "auto",
                 ) -> dict[str, Any]:
        """Check snippets against the working tree: a verdict (usable, stale-but-ok,
        historical-only, excluded), reason, citation and, when the code moved or changed, where
        the current code is. Each result keeps its item as given, with `input_index` (its place
        in `snippets`) and `input_id` (the id it carried). An item that cannot be read is
        excluded with reason `malformed-input` and a `detail` naming the missing field; the others
        are still judged. Paths outside the repository are excluded and never read."""
        from codevouch import validator

        results = self._call(lambda idx: idx.validate(snippets, strict=strict, input_format=input_format))
        return {"results": [validator.to_json(r) for r in results],
                "summary": dict(sorted(Counter(r.verdict for r in results).items()))}

    def status(self) -> dict[str, Any]:
        """The index of this repository: per branch the indexed commit, the branch head, commits
        behind, when it was built and how long ago (age_seconds), files and chunks."""
        rows = self._call(lambda idx: idx.status())
        now = datetime.now(timezone.utc)
        branches = [{**row, **ages(row.get("built_at"), now)} for row in rows]
        out: dict[str, Any] = {"repo": str(self.repo), "indexed": bool(branches), "branches": branches}
        if not branches:
            out["hint"] = f"nothing indexed; run `codevouch index build --repo {self.repo}`."
        return out

    def health(self, branch: Branch = None, recent: Annotated[int | None, Field(
                   ge=1, le=100_000, description="How many recent calls to look at (default: configured).")
               ] = None) -> dict[str, Any]:
        """How stale the hits of recent search, validate and context calls were (ratio and
        trend), the paths most often stale, commits behind, and whether to rebuild the index."""
        return self._call(lambda idx: idx.health(branch=branch, recent=recent)).to_json()

    def check_refs(self, text: Annotated[str, Field(
                       min_length=1, max_length=1_000_000,
                       description="An answer (markdown) or a patch that cites code.")],
                   strict: Annotated[bool, Field(description="Also fail on unknown names and paths "
                                                             "outside the repository.")] = False,
                   ) -> dict[str, Any]:
        """Check every code reference in an answer against the working tree: `path#L10-L20`,
        `path:42`, backticked `Class.method` and function names, imports, a patch's files and
        hunks. `passed` is false when something is missing; suggestions say where it went."""
        report = self._call(lambda idx: idx.check_refs(text))
        return {**report.to_json(), "passed": report.passed(strict)}

    def build(self, branches: Annotated[list[str] | None, Field(
                  description="Branches to index (default: the current one).")] = None,
              wait: Annotated[float, Field(ge=0, le=600, description="Seconds to wait for another "
                                                                      "build to finish.")] = 0) -> dict[str, Any]:
        """Index the committed content of branches, incrementally (takes the index's writer lock:
        fails with a message when another build holds it longer than `wait`)."""
        from dataclasses import asdict

        summaries = self._call(lambda idx: idx.build(branches=branches or (), wait=wait))
        return {"branches": [asdict(s) for s in summaries]}


def _log(message: str) -> None:
    """A line for the server's log: stderr (stdout is the client's)."""
    sys.stderr.write(f"codevouch mcp: {message}\n")
    sys.stderr.flush()


BUILD_DISABLED = ("build is disabled: this server is read-only. To let agents build the index, start it "
                  "with `codevouch mcp --allow-build`; or run `codevouch index build` in the repository.")


def argument_errors(tool: str, errors: list[Any], arguments: dict[str, Any], schema: dict[str, Any]) -> str:
    """One sentence per bad argument (pydantic's `errors()`, grouped by argument), naming it and
    what it accepts, from the tool's input schema: what an agent needs to correct the call,
    instead of pydantic's dump with its documentation links."""
    import json

    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    bad: dict[str, str] = {}
    for err in errors:
        loc = err.get("loc") or ()
        name = str(loc[0]) if loc else ""
        if name in bad:
            continue
        if not name:
            bad[name] = "The arguments must be a JSON object."
            continue
        allowed = _accepts(props.get(name, {}))
        if err.get("type") == "missing":
            bad[name] = f"`{name}` is required: {allowed}." if allowed else f"`{name}` is required."
            continue
        shown = json.dumps(arguments.get(name), ensure_ascii=True, default=str)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        bad[name] = f"`{name}` must be {allowed} (got {shown})." if allowed else \
            f"`{name}` is not valid: {err.get('msg', 'rejected')} (got {shown})."
    return f"Invalid arguments for {tool}: " + " ".join(bad.values())


def _accepts(prop: dict[str, Any]) -> str:
    """What a JSON-schema property accepts, in words ("a whole number from 1 to 200")."""
    options = prop.get("anyOf")
    if options:
        words = [_accepts(o) for o in options if o.get("type") != "null"]
        nullable = any(o.get("type") == "null" for o in options)
        return " or ".join(w for w in words if w) + (" (or null for the default)" if nullable else "")
    if "enum" in prop:
        return "one of " + ", ".join(_json(v) for v in prop["enum"])
    kind = prop.get("type")
    words_for = _ACCEPTS_BY_TYPE.get(kind) if isinstance(kind, str) else None
    return words_for(prop) if words_for is not None else ""


def _accepts_number(prop: dict[str, Any]) -> str:
    what = "a whole number" if prop.get("type") == "integer" else "a number"
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        return f"{what} from {low} to {high}"
    return what + (f" of at least {low}" if low is not None else f" of at most {high}" if high is not None else "")


def _accepts_string(prop: dict[str, Any]) -> str:
    low, high = prop.get("minLength"), prop.get("maxLength")
    if low and high:
        return f"a string of {low} to {high} characters"
    return "a string" + (f" of at most {high} characters" if high else "")


def _accepts_array(prop: dict[str, Any]) -> str:
    items = prop.get("items", {})
    inner = " of values from " + ", ".join(_json(v) for v in items["enum"]) if "enum" in items else \
        " of objects" if items.get("type") == "object" else ""
    low, high = prop.get("minItems"), prop.get("maxItems")
    return f"a list{inner}" + (f" ({low} to {high} items)" if low and high else "")


# A JSON-schema type -> what a property of that type accepts, in words.
_ACCEPTS_BY_TYPE: dict[str, Callable[[dict[str, Any]], str]] = {
    "integer": _accepts_number,
    "number": _accepts_number,
    "string": _accepts_string,
    "boolean": lambda prop: "true or false",
    "array": _accepts_array,
    "object": lambda prop: "an object",
}


def _json(value: object) -> str:
    import json
    return json.dumps(value)


def _encodable(value: T) -> T:
    """`value` with each string holding a lone surrogate (a non-UTF-8 file name byte) written as its
    escape (`bad\\xff.py`): the SDK writes UTF-8, and one such name failed every search of its tree."""
    if isinstance(value, str):
        return faithful(value)  # type: ignore[return-value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, (list, tuple)):
        return type(value)(_encodable(v) for v in value)
    return value


def _encoding(tool: Callable[..., T], written: Callable[[Any], str] | None = None) -> Callable[..., Any]:
    """`tool` answering with `_encodable` data (its signature kept: the SDK reads the schema), its
    text content escaped as the CLI's output is (`visible`; JSON through `json_text`: C1, DEL and
    bidi controls as `\\uXXXX`), the structured content itself exact."""
    @functools.wraps(tool)
    def answer(*args: Any, **kwargs: Any) -> Any:
        value = _encodable(tool(*args, **kwargs))
        if isinstance(value, str):
            return visible(value)
        if not isinstance(value, dict):
            return value
        import pydantic_core
        from mcp.types import CallToolResult, TextContent

        # A search's hits as a model reads them (`written`: each piece of code once); others as JSON.
        text = visible(written(value)) if written is not None else \
            json_text(pydantic_core.to_json(value, fallback=str, indent=2).decode())
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=value)
    return answer


def _server_class() -> type[MCPServer]:
    """MCPServer with codevouch's answers to a call the SDK would refuse in its own words: a
    bad argument (argument_errors), and `build` on a read-only server (BUILD_DISABLED)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    class Server(MCPServer):
        allow_build = False

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            if name == "build" and not self.allow_build:
                raise ToolError(BUILD_DISABLED)
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if not isinstance(cause, ValidationError):
                    raise
                schema = next((t.input_schema for t in await self.list_tools() if t.name == name), {})
                raise ToolError(argument_errors(name, list(cause.errors()), arguments, schema)) from cause

    return Server


def create_server(repo: Path | str = ".", index_dir: Path | str | None = None, allow_build: bool = False,
                  embedder: str | None = None) -> MCPServer:
    """An MCP server for one repository (checked now: NotARepository if it is not one).

    Raises InputError when the `mcp` package is missing (install the `mcp` extra).
    """
    from codevouch import __version__
    from codevouch.worktree import gitio, gitreads

    try:
        from mcp.types import ToolAnnotations
        server_class = _server_class()
    except ImportError as exc:
        raise InputError("the MCP server needs the `mcp` package: pip install -e '.[mcp]' in a checkout of "
                         "codevouch, or pip install 'mcp>=2.3,<3'.") from exc
    gitreads.guard(repo)           # before git: a FIFO .gitignore or include would block it
    root = gitio.repo_root(repo)
    tools = Tools(root, Path(index_dir).expanduser().resolve() if index_dir else None, embedder)
    atexit.register(tools.resident.close)   # the background embedding ends before the interpreter
    server = server_class(name="codevouch", version=__version__, instructions=_INSTRUCTIONS, log_level="WARNING")
    server.allow_build, server.tools = allow_build, tools  # type: ignore[attr-defined]  # Server's own attributes
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    for fn in (tools.search, tools.show, tools.references, tools.outline, tools.context, tools.validate, tools.status,
               tools.health, tools.check_refs):
        server.add_tool(_encoding(fn, hits_text if fn == tools.search else shown_text if fn == tools.show else None),
                        name=fn.__name__,
                        annotations=read_only)
    if allow_build:
        server.add_tool(_encoding(tools.build), name="build",
                        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                                    idempotent_hint=True, open_world_hint=False))
    return server


# -- the wire: every request gets an answer -------------------------------------------------------
#
# The MCP SDK drops a line it cannot read (not JSON, "jsonrpc": "1.0", nesting deeper than its
# parser goes, a lone surrogate it cannot write back) without a word, and the client waits for
# ever. serve_guarded puts a check in front of it: each line from the client is read (at most
# MAX_REQUEST_BYTES), and one the SDK would drop is answered here with a JSON-RPC error (its id
# when it has one, else null); the rest go on to the SDK unchanged. Both the SDK's output and
# these errors reach stdout whole lines at a time, under one lock.

MAX_REQUEST_BYTES = 64 << 20

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def wire_error(line: bytes) -> bytes | None:
    """The JSON-RPC error for a line the SDK would drop without an answer (b"" for a blank line,
    which is dropped), or None when the line goes on to the SDK."""
    import json
    if not line.strip():
        return b""
    try:
        message = json.loads(line)
    except RecursionError:
        # Deeper than Python's parser goes (about 1,000 levels): the id, if the line has one at
        # its top level, is still found by a scan that does not recurse.
        return _error(top_level_id(line), PARSE_ERROR, _TOO_DEEP)
    except ValueError as exc:         # not JSON, or not UTF-8
        return _error(None, PARSE_ERROR, f"Parse error: {str(exc)[:200]}")
    if isinstance(message, list):
        return _error(None, INVALID_REQUEST, "Invalid Request: batches are not supported; send one message a line")
    if not isinstance(message, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: a message is a JSON object")
    ident = message.get("id")
    rid = ident if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None
    if message.get("jsonrpc") != "2.0":
        return _error(rid, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if _lone_surrogate(message):
        return _error(rid, INVALID_PARAMS, "Invalid params: a string holds a lone surrogate (\\ud800-\\udfff), "
                                           "which is not Unicode text")
    return _sdk_refusal(line, rid)


# The SDK reads each line with pydantic's JSON parser, which stops at 200 levels of nesting
# (a request nested 200 deep in its params got no answer; 199 was answered), and drops any line
# its message types refuse. The line is read here with the SDK's own reader first, so whatever it
# would drop is answered instead, whatever the reason.
_TOO_DEEP = "Parse error: the JSON is nested too deeply (at most about 200 levels)"


def _sdk_refusal(line: bytes, rid: object) -> bytes | None:
    """The error for a line (JSON, a JSON-RPC 2.0 object) that the SDK's reader refuses, None when it
    reads it."""
    from mcp import types
    from pydantic import ValidationError
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        errors: list[dict[str, Any]] = [dict(err) for err in exc.errors(include_url=False)]
        if any("recursion limit" in str(err.get("msg", "")) for err in errors):
            return _error(rid, PARSE_ERROR, _TOO_DEEP)
        first = errors[0] if errors else {}
        where = ".".join(str(part) for part in first.get("loc", ())[1:]) or "the message"
        said = str(first.get("msg", "not a JSON-RPC message"))[:200]
        return _error(rid, INVALID_REQUEST, f"Invalid Request: {where}: {said}")
    except (ValueError, RecursionError):
        return _error(rid, PARSE_ERROR, _TOO_DEEP)
    return None


ID_SCAN_BYTES = 256 << 10
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_ID_VALUE = re.compile(rb'\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.)*")')


def top_level_id(line: bytes) -> str | int | None:
    """The `"id"` of a JSON object too deep (or too long) to parse, found without recursion: the
    first key "id" at the top level within the line's first ID_SCAN_BYTES, when its value is a
    whole number or a string (the ids JSON-RPC allows); None when there is none there or the line
    is no object. Bounded, so a line of 64 MiB of brackets costs no more than a short one."""
    import json
    depth = 0
    for token in _TOKENS.finditer(line, 0, ID_SCAN_BYTES):
        text = token.group()
        if text in (b"[", b"{"):
            depth += 1
        elif text in (b"]", b"}"):
            depth -= 1
        elif depth == 1 and text == b'"id"':
            value = _ID_VALUE.match(line, token.end())
            if value is None:
                continue            # "id" as a value, or an id that is not a number or a string
            try:
                found = json.loads(value.group(1))
            except ValueError:
                return None
            return found if isinstance(found, (str, int)) else None
    return None


def _lone_surrogate(value: object) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if has_lone_surrogate(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _error(rid: object, code: int, message: str) -> bytes:
    import json
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}).encode() + b"\n"


def serve_guarded(run: Callable[[], None]) -> None:
    """Run `run` (the SDK's stdio server) with stdin and stdout behind wire_error's check."""
    import fcntl
    import os
    import select
    import termios
    import time

    client_in, client_out = os.dup(0), os.dup(1)
    sdk_in_r, sdk_in_w = os.pipe()
    sdk_out_r, sdk_out_w = os.pipe()
    os.dup2(sdk_in_r, 0)
    os.dup2(sdk_out_w, 1)
    os.close(sdk_in_r)
    os.close(sdk_out_w)
    lock = threading.Lock()

    def emit(data: bytes) -> None:
        with lock:
            view = memoryview(data)
            while view:
                view = view[os.write(client_out, view):]

    def pump_in() -> None:
        with open(client_in, "rb") as src, open(sdk_in_w, "wb") as dst:
            while True:
                line = src.readline(MAX_REQUEST_BYTES + 1)
                if not line:
                    return              # EOF: closing dst ends the SDK's session
                if len(line) > MAX_REQUEST_BYTES and not line.endswith(b"\n"):
                    rid = top_level_id(line)       # from its start, if it has one there
                    while line and not line.endswith(b"\n"):        # skip the rest of it
                        line = src.readline(1 << 20)
                    emit(_error(rid, INVALID_REQUEST,
                                f"Invalid Request: a message is at most {MAX_REQUEST_BYTES} bytes"))
                    continue
                answer = wire_error(line)
                if answer is None:
                    dst.write(line if line.endswith(b"\n") else line + b"\n")
                    dst.flush()
                elif answer:
                    emit(answer)

    def pump_out() -> None:
        with open(sdk_out_r, "rb", buffering=0, closefd=False) as src:
            pending = b""
            while True:
                chunk = src.read(1 << 16)
                if not chunk:
                    break
                pending += chunk
                whole, sep, pending = pending.rpartition(b"\n")
                if sep:
                    emit(whole + sep)
            if pending:
                emit(pending)

    threading.Thread(target=pump_in, name="mcp-wire-in", daemon=True).start()
    out = threading.Thread(target=pump_out, name="mcp-wire-out", daemon=True)
    out.start()
    try:
        run()
    finally:
        # What the SDK wrote last may still be in the pipe: wait (briefly) until it is copied.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            waiting = bytearray(4)
            fcntl.ioctl(sdk_out_r, termios.FIONREAD, waiting)
            if not int.from_bytes(waiting, "little"):
                select.select([], [], [], 0.05)
                break
            select.select([], [], [], 0.02)
