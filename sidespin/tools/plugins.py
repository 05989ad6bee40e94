"""Python plugins: the `@tool` decorator that makes a `Tool` of a function, and loading `plugins/*.py`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

from sidespin.tools.schema import function_schema
from sidespin.tools.types import TaskSupport, Tool, ToolFn

__all__ = ["tool", "load_plugins", "plugins_dir"]


def _tool_from_function(fn: ToolFn, **options: Any) -> Tool:
    description, input_schema = function_schema(fn)
    return Tool(
        name=options.pop("name", None) or fn.__name__,
        description=options.pop("description", None) or description,
        input_schema=input_schema,
        fn=fn,
        **options,
    )


def tool(
    fn: ToolFn | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    formatter: Callable[[Any], str] | None = None,
    read_only: bool = False,
    destructive: bool = False,
    timeout: float | None = None,
    task: TaskSupport | None = None,
    asks_first: bool = False,
) -> Any:
    """Turn a plain (sync or async) function into a `Tool`, with or without arguments.

        @tool(read_only=True)
        def say_hello(name: str) -> str:
            \"\"\"Greet someone by name.\"\"\"

    `task`: the tool can run long, so `/mcp` serves it as a task (`optional`: to a client that takes
    tasks, a plain call to others; `required`: to such clients only). `asks_first`: the call becomes
    a task only when the tool calls `as_task()`; its questions (`ask`) before that are answered on
    the request itself. See `sidespin.mcp.served`.
    """
    options = dict(
        name=name,
        description=description,
        formatter=formatter,
        read_only=read_only,
        destructive=destructive,
        timeout=timeout,
        task=task,
        asks_first=asks_first,
    )
    if fn is not None:
        return _tool_from_function(fn, **options)
    return lambda f: _tool_from_function(f, **options)


def load_plugins(directory: Path) -> list[Tool]:
    """Import every `*.py` file of a plugins folder and collect the `Tool`s it defines."""
    found: list[Tool] = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module_name = f"sidespin_plugins.{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        for value in vars(module).values():
            if isinstance(value, Tool):
                value.source = f"plugin:{path.stem}"
                found.append(value)
    return found


def plugins_dir() -> Path:
    """The repository's `plugins/` folder (next to the `sidespin` package)."""
    return Path(__file__).resolve().parents[2] / "plugins"
