"""9. One approval policy for every way in: a tool that asks on the page is not run silently from outside."""

from __future__ import annotations

from mcp.client import Client
from starlette.testclient import TestClient

from tests.conftest import in_process, serve_app
from tests.security.conftest import app_request, json_of

JSON = {"Content-Type": "application/json"}


def web_search_through_the_executor(client: TestClient) -> tuple[int, dict]:
    status, _, body = app_request(client, "POST", "/mcp-tool-executor",
                                  b'{"tool": "web_search", "params": {"query": "google stock"}}', JSON)
    return status, json_of(body)


def test_the_executor_refuses_a_tool_that_would_ask_on_the_page_with_403_and_a_reason(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        status, body = web_search_through_the_executor(client)
        assert status == 403 and "approval" in body["error"] and "config.json" in body["error"]
        status, _, answer = app_request(client, "POST", "/mcp-tool-executor",
                                        b'{"tool": "say_hello", "params": {"name": "Ada"}}', JSON)
        assert status == 200 and json_of(answer)["result"] == "Hello, Ada!"  # read-only tools run as on the page


def test_an_explicit_setting_lets_outside_callers_run_it(echo_model, data_dir):
    with in_process(echo_model, data_dir, tools={"web_search": {"approval": "auto"}}) as client:
        status, body = web_search_through_the_executor(client)
        assert status == 200 and body["status"] == "success"


def test_deny_refuses_everything_from_outside_too(echo_model, data_dir):
    with in_process(echo_model, data_dir, approval="deny") as client:
        status, _, answer = app_request(client, "POST", "/mcp-tool-executor",
                                        b'{"tool": "say_hello", "params": {"name": "Ada"}}', JSON)
        assert status == 403 and "deny" in json_of(answer)["error"]


async def test_our_mcp_endpoint_refuses_the_same_tool_with_a_reason(echo_model, data_dir):
    # the MCP SDK's client speaks HTTP over a socket: this one keeps a real server
    with serve_app(echo_model, data_dir) as base:
        async with Client(base + "/mcp") as client:
            refused = await client.call_tool("web_search", {"query": "google stock"})
            assert refused.is_error and "approval" in refused.content[0].text
            allowed = await client.call_tool("say_hello", {"name": "Ada"})
            assert not allowed.is_error and "Hello, Ada!" in allowed.content[0].text
