"""Tools for clinical agents: the framework (``@tool``, ``Toolkit``, schemas, call parsing, dispatch) and shared
toolkits.

Shared toolkits live in sub-packages (``clinical_gym.tools.instruments.InstrumentsToolkit``: validated clinical scoring
instruments); importing ``tools`` loads only the framework.
"""

from clinical_gym.tools.arguments import ArgumentError, ToolDefinitionError
from clinical_gym.tools.calls import FORMAT_SCORES, CallForm, ParsedCall, parse_tool_call, parse_tool_calls
from clinical_gym.tools.spec import ToolKind, ToolSpec, tool
from clinical_gym.tools.toolkit import Toolkit, ToolNameClashError, ToolResult

__all__ = [
    "FORMAT_SCORES", "ArgumentError", "CallForm", "ParsedCall", "ToolDefinitionError", "ToolKind", "ToolNameClashError",
    "ToolResult", "ToolSpec", "Toolkit", "parse_tool_call", "parse_tool_calls", "tool",
]
