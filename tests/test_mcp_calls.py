"""How an MCP tool call runs and fails (codevouch/mcp_calls.py), the same on both servers."""
from __future__ import annotations

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from codevouch.call import Call
from codevouch.errors import BudgetTooSmall, NotIndexed
from codevouch.mcp_calls import serve_tool
from codevouch.retriever.resident import Resident


def _raise(exc: BaseException) -> None:
    raise exc


@pytest.mark.parametrize(("exc", "says"), [
    (BudgetTooSmall(10, 120), "pass a larger `budget` (at least 120), or a `model` with a larger window"),
    (NotIndexed("branch main was never indexed; run `codevouch index build`."), "branch main was never indexed"),
    (PermissionError(13, "Permission denied", "/srv/secret.py"), "permission denied: /srv/secret.py (Permission denied)"),
])
def test_each_error_an_agent_can_act_on_is_a_tool_error(exc: BaseException, says: str) -> None:
    resident = Resident(lambda line: None)
    with pytest.raises(ToolError) as caught:
        serve_tool(resident, lambda call: _raise(exc))
    assert says in str(caught.value) and "--budget" not in str(caught.value)
    seen: list[Call] = []
    assert serve_tool(resident, lambda call: seen.append(call) or 7) == 7 and isinstance(seen[0], Call)
    with pytest.raises(ZeroDivisionError):       # a bug is not dressed as a tool error
        serve_tool(resident, lambda call: 1 // 0)
