"""`python -m sidespin.testing.conformance URL`: sidespin as the client under test of the MCP conformance suite.

Test support, not product code: shipped in the package for the conformance runner and the test suite
(`tests/mcp/test_conformance.py`).

The suite (`conformance client --command "python -m sidespin.testing.conformance" --scenario NAME`) starts
a scenario server, runs this with the server's URL as the last argument, names the scenario in
`MCP_CONFORMANCE_SCENARIO` and may pass data in `MCP_CONFORMANCE_CONTEXT` (JSON). Everything goes
through the chat's own path: `MCPManager` connects, tools join a `ToolRegistry`, and
`registry.execute` calls them. The scenario only decides which tools to call with what.

The `auth/*` scenarios sign in through the product's own OAuth path (`sidespin.mcp.auth`, tokens in
memory): the suite's authorization server redirects at once, so the "browser" here fetches the
authorization URL without following the redirect and hands the `code`, `state` and `iss` of its
Location to `SignIns.finish`, as `/oauth/callback` would. A pre-registered client comes from
`MCP_CONFORMANCE_CONTEXT` the way `mcp.json`'s `oauth` gives one.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import mcp_types as types
from loguru import logger
from mcp.client.session import ClientRequestContext

from sidespin.errors import SidespinError
from sidespin.mcp import MCPManager, ServerConfig
from sidespin.mcp.auth import PendingSignIn, SignInError, SignIns, redirect_uri
from sidespin.mcp.config import OAuthConfig
from sidespin.tools import ToolCall, ToolRegistry

__all__ = ["main", "run", "example_arguments"]

SERVER = "conformance"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the CIMD the suite expects
_SIGN_IN_SECONDS = 20.0
_LIST_ONLY = {"initialize", "request-metadata", "json-schema-ref-no-deref"}
_EXAMPLES: dict[str, Any] = {
    "string": "example",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for the required properties of a schema: each one's default, first enum value or a typed example."""
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        spec = properties.get(name) or {}
        if "default" in spec:
            arguments[name] = spec["default"]
        elif spec.get("enum"):
            arguments[name] = spec["enum"][0]
        else:
            kind = spec.get("type", "string")
            arguments[name] = _EXAMPLES.get(kind[0] if isinstance(kind, list) else kind, "example")
    return arguments


async def accept_with_defaults(
    context: ClientRequestContext, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """Elicitation as an unattended client: accept a form, filling every field that has a default (SEP-1034)."""
    if not isinstance(params, types.ElicitRequestFormParams):
        return types.ErrorData(code=types.INVALID_REQUEST, message="only form elicitation is supported")
    properties = params.requested_schema.get("properties", {})
    content = {
        name: spec["default"] for name, spec in properties.items() if isinstance(spec, dict) and "default" in spec
    }
    return types.ElicitResult(action="accept", content=content)


def _planned_calls(scenario: str, context: dict[str, Any], registry: ToolRegistry) -> list[tuple[str, dict[str, Any]]]:
    if "toolCalls" in context:
        return [(call["name"], call.get("arguments") or {}) for call in context["toolCalls"]]
    if scenario in _LIST_ONLY:
        return []
    if scenario == "tools_call":
        return [("add_numbers", {"a": 2, "b": 3})]
    if scenario == "json-schema-2020-12-preservation":
        # Round-trip the schema exactly as the registry holds it: this is what the model would be given.
        return [("json_schema_echo", {"schema": registry.get("json_schema_2020_12_tool").input_schema})]
    return [(item.name, example_arguments(item.input_schema)) for item in registry]


async def _touch_resources_and_prompts(manager: MCPManager) -> None:
    """Exercise the other name-bearing requests (resources/read, prompts/get) for the header scenarios."""
    client = manager.client(SERVER)
    capabilities = client.server_capabilities
    if capabilities.resources is not None:
        resources = await client.list_resources()
        if resources.resources:
            await client.read_resource(str(resources.resources[0].uri))
    if capabilities.prompts is not None:
        prompts = await client.list_prompts()
        if prompts.prompts:
            await client.get_prompt(prompts.prompts[0].name)


async def open_headless(sign_ins: SignIns, pending: PendingSignIn) -> None:
    """The browser of an unattended run: follow the authorization URL one step and bring its redirect back."""
    async with httpx2.AsyncClient(timeout=_SIGN_IN_SECONDS) as http:
        response = await http.get(pending.url, follow_redirects=False)
    location = response.headers.get("location")
    if not response.is_redirect or not location:
        raise SignInError(f"the authorization endpoint answered {response.status_code} without a redirect")
    query = {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}
    sign_ins.finish(query.get("state", ""), query.get("code"), query.get("iss"), query.get("error"))


async def _settled(manager: MCPManager) -> None:
    """Wait while the server signs in (headless, so in moments); fail if it ends up anything but ready."""
    async with asyncio.timeout(_SIGN_IN_SECONDS):
        seen = manager.version
        while (status := manager.connection(SERVER).status) not in ("ready", "failed"):
            seen = await manager.wait_for_change(seen)
    if status == "failed":
        raise SignInError(f"sign-in failed: {manager.connection(SERVER).error}")


def _oauth(context: dict[str, Any]) -> OAuthConfig:
    return OAuthConfig(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL,
    )


async def run(url: str, scenario: str, context: dict[str, Any]) -> int:
    """Connect, list, call what the scenario needs; 0 once done (the suite judges the tool results itself)."""
    config = ServerConfig(name=SERVER, transport="http", url=url, timeout=30.0, oauth=_oauth(context))
    sign_ins = SignIns(redirect_uri(5001), opener=open_headless)
    async with MCPManager([config], strict=True, elicitation=accept_with_defaults, sign_ins=sign_ins) as manager:
        await _settled(manager)
        registry = ToolRegistry()
        manager.register_into(registry)
        logger.info("CONFORMANCE_TOOLS {} {}", scenario, registry.names())
        for name, arguments in _planned_calls(scenario, context, registry):
            result = await registry.execute(ToolCall(name=name, arguments=arguments))
            print(f"{name}: {result.text()[:200]}")
        if scenario == "http-standard-headers":
            async with asyncio.timeout(config.timeout):
                await _touch_resources_and_prompts(manager)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        usage = "usage: python -m sidespin.testing.conformance URL  (scenario in MCP_CONFORMANCE_SCENARIO)"
        print(usage, file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    try:
        return asyncio.run(run(argv[-1], scenario, context))
    except SidespinError as error:  # the edge: a failure becomes a message for the person running the suite
        print(f"conformance client: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
