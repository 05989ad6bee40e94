"""Tools: what a call is (`types`), a function read as a schema (`schema`), the registry that runs
calls (`registry`) and Python plugins (`plugins`).

A tool is built from a plain function's signature and docstring; Python plugins in `plugins/`
and tools of external MCP servers share one registry. Every name is importable from here.
"""

from sidespin.tools.plugins import load_plugins, plugins_dir, tool
from sidespin.tools.registry import Cancellation, ToolRegistry, current_cancellation
from sidespin.tools.schema import coerce_arguments, function_schema
from sidespin.tools.types import (
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_TIMEOUT,
    DEFAULT_TOOL_WORKERS,
    FAILED,
    MAX_ATTACHMENT_CHARS,
    ErrorKind,
    TaskSupport,
    Tool,
    ToolCall,
    ToolFn,
    ToolResult,
    failed,
    new_call_id,
)

__all__ = [
    "FAILED",
    "failed",
    "Tool",
    "ToolCall",
    "ToolResult",
    "ToolFn",
    "ErrorKind",
    "TaskSupport",
    "ToolRegistry",
    "Cancellation",
    "current_cancellation",
    "tool",
    "coerce_arguments",
    "function_schema",
    "new_call_id",
    "load_plugins",
    "plugins_dir",
    "DEFAULT_TIMEOUT",
    "DEFAULT_TOOL_WORKERS",
    "DEFAULT_MAX_RESULT_CHARS",
    "MAX_ATTACHMENT_CHARS",
]
