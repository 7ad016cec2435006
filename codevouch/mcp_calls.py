"""How an MCP tool call runs, on the one-repository server (mcp_server.Tools) and the server on
several repositories (mcp_across.AcrossTools) alike: on the server's warm state, one at a time,
in a `Call` of the server's process as of that tool call, each error the caller can act on turned
into a tool error in words an agent can follow (its arguments, never the CLI's flags), and the
rest of a big overlay embedded in the background afterwards."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from codevouch.call import Call
from codevouch.errors import BudgetTooSmall, CodevouchError
from codevouch.retriever.resident import Resident

T = TypeVar("T")


def serve_tool(resident: Resident, work: Callable[[Call], T]) -> T:
    """`work` run by `resident` in this tool call's `Call`; a CodevouchError or a PermissionError
    raised as the SDK's ToolError, with what to do."""
    from mcp.server.mcpserver.exceptions import ToolError

    call = Call.of_process()        # the server's own environment and directory, as of this tool call
    try:
        try:
            return resident.serve(call, lambda: work(call))
        except BudgetTooSmall as exc:
            # The CLI's words name its flag (--budget); an agent passes arguments.
            raise ToolError(f"a budget of {exc.budget} tokens cannot hold even an empty context pack "
                            f"({exc.needed} tokens): pass a larger `budget` (at least {exc.needed}), or "
                            "a `model` with a larger window.") from exc
        except CodevouchError as exc:
            raise ToolError(str(exc)) from exc
        except PermissionError as exc:     # as the CLI says it (commands/common.error_handler)
            raise ToolError(f"permission denied: {exc.filename or ''} ({exc.strerror or 'not permitted'}); the "
                            "server reads only what its user may read.") from exc
    finally:
        # After the call, whether it answered or failed: the SDK sends the answer meanwhile.
        resident.embed_rest_in_background()
