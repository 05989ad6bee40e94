"""The JSON endpoints, for programs rather than the page:

    POST /mcp-tool-executor   {"tool": name, "params": {...}}: run one registered tool
    GET  /tools               every tool: name, description, schema, source
    GET  /health              the server's state: backend, model, tools, MCP servers

(The built-in plugins as a real MCP server are at `/mcp`, mounted by `sidespin.web.app`.)
"""

from __future__ import annotations

from fasthtml.common import APIRouter, JSONResponse
from loguru import logger
from starlette.requests import Request

from sidespin.errors import BadArguments, ToolNotFound
from sidespin.tools import ToolCall, coerce_arguments
from sidespin.web.forms import engine_of, json_body, refusal

__all__ = ["ar", "mcp_tool_executor", "tools", "health"]

ar = APIRouter()


@ar("/mcp-tool-executor", methods=["post"])
async def mcp_tool_executor(request: Request):
    """Run one registered tool: {"tool": name, "params": {...}} → {"status": "success", "result": ...}."""
    engine = engine_of(request)
    body = json_body(await request.body())
    if not isinstance(body, dict) or not isinstance(body.get("tool"), str):
        return refusal('expected a JSON object like {"tool": "say_hello", "params": {"name": "World"}}')
    params = body.get("params", {})
    if params is None:
        params = {}
    try:
        target = engine.registry.get(body["tool"])
        coerce_arguments(target.input_schema, params)
    except ToolNotFound as error:
        return refusal(str(error), 404)
    except BadArguments as error:
        return refusal(f"bad arguments for {body['tool']!r}: {error}")
    why = engine.outside_policy(target, params if isinstance(params, dict) else None)
    if why is not None:
        logger.warning("TOOL_CALL_REFUSED {} {}", target.name, why)
        return refusal(why, 403)
    result = await engine.registry.execute(ToolCall(body["tool"], params), timeout=engine.settings.tool_timeout)
    if not result.ok:
        status = 504 if result.kind == "timeout" else 200
        return JSONResponse({"status": "error", "error": result.error, "kind": result.kind, "seconds": result.seconds},
                            status_code=status)
    return JSONResponse(
        {"status": "success", "result": result.output, "seconds": result.seconds},
        status_code=200,
    )


@ar(methods=["get"])
async def tools(request: Request):
    engine = engine_of(request)
    return JSONResponse({
        "count": len(engine.registry),
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema, "source": t.source,
             "read_only": t.read_only, "formatter": t.formatter is not None}
            for t in engine.registry
        ],
    })


@ar(methods=["get"])
async def health(request: Request):
    return JSONResponse(engine_of(request).health())
