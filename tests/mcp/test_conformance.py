"""The official MCP conformance suite against both sides: `python -m sidespin.testing.conformance` and our /mcp.

Expected failures come from conformance-baseline.md (one line and a reason each); all else must pass.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_harness import (
    CONFORMANCE,
    NODE,
    ROOT,
    conformance_endpoint,
    endpoint_app,
    node_env,
    requires_node,
    serve_in_thread,
)

pytestmark = [pytest.mark.node, requires_node]

# Every `auth/*` client scenario but the [extension] ones; `@revision` where the suite has it at that revision only.
AUTH_SCENARIOS = [
    *(
        f"auth/{name}"
        for name in [
            "metadata-default",
            "metadata-var1",
            "metadata-var2",
            "metadata-var3",
            "basic-cimd",
            "scope-from-www-authenticate",
            "scope-from-scopes-supported",
            "scope-omitted-when-undefined",
            "scope-step-up",
            "scope-retry-limit",
            "token-endpoint-auth-basic",
            "token-endpoint-auth-post",
            "token-endpoint-auth-none",
            "pre-registration",
        ]
    ),
    "auth/2025-03-26-oauth-metadata-backcompat@2025-03-26",
    "auth/2025-03-26-oauth-endpoint-fallback@2025-03-26",
    *(
        f"auth/{name}@2026-07-28"
        for name in [
            "resource-mismatch",
            "offline-access-scope",
            "offline-access-not-supported",
            "authorization-server-migration",
            "iss-supported",
            "iss-not-advertised",
            "iss-supported-missing",
            "iss-wrong-issuer",
            "iss-unexpected",
            "iss-normalized",
            "metadata-issuer-mismatch",
        ]
    ),
]
CLIENT_SCENARIOS = [
    "initialize",
    "tools_call",
    "request-metadata",
    "sep-2322-client-request-state",
    "http-standard-headers",
    "http-custom-headers",
    "http-invalid-tool-headers",
    "json-schema-ref-no-deref",
    "json-schema-2020-12-preservation",
    "sse-retry",
    "elicitation-sep1034-client-defaults",
    *AUTH_SCENARIOS,
]
TOOLS_SCENARIOS = [
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
]
RESOURCES_PROMPTS_SCENARIOS = [
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
]
SERVER_SCENARIOS = [
    *TOOLS_SCENARIOS,
    *RESOURCES_PROMPTS_SCENARIOS,
    "resources-subscribe",
    "resources-unsubscribe",
    "tools-call-with-logging",
    "tools-call-sampling",
    "tools-call-elicitation",
    "server-initialize",
    "server-stateless",
    "dns-rebinding-protection",
    "http-header-validation",
    "json-schema-2020-12",
    *(
        f"{name}@2026-07-28"
        for name in [
            *TOOLS_SCENARIOS,
            *RESOURCES_PROMPTS_SCENARIOS,
            "sep-2164-resource-not-found",
            "json-schema-2020-12",
            "dns-rebinding-protection",
        ]
    ),
]
BASELINE = ROOT / "conformance-baseline.md"
_ROW = re.compile(r"^\|\s*(client|server)\s*\|\s*([\w@./-]+)\s*\|\s*(.+?)\s*\|\s*$")


def baseline() -> dict[tuple[str, str], str]:
    """(side, scenario[@revision]) -> reason, from the table in conformance-baseline.md."""
    rows: dict[tuple[str, str], str] = {}
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        if match := _ROW.match(line):
            rows[(match[1], match[2])] = match[3]
    return rows


def cases(side: str, scenarios: list[str]) -> list[object]:
    known = baseline()
    params: list[object] = []
    for scenario in scenarios:
        reason = known.get((side, scenario)) or known.get((side, scenario.split("@")[0]))
        marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
        params.append(pytest.param(scenario, marks=marks, id=f"{side}-{scenario}"))
    return params


def run_suite(arguments: list[str], output: Path) -> list[dict]:
    """Run the suite; return its checks, failing with the failed ones (and the CLI's output) on a non-zero exit."""
    completed = subprocess.run(
        [str(NODE), str(CONFORMANCE), *arguments, "-o", str(output)],
        cwd=ROOT,
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    checks = [check for path in output.glob("**/checks.json") for check in json.loads(path.read_text(encoding="utf-8"))]
    failed = [
        f"{check['id']}: {check.get('errorMessage', check.get('description'))}"
        for check in checks
        if check["status"] == "FAILURE"
    ]
    assert completed.returncode == 0 and not failed, "\n".join(
        [*failed, completed.stdout[-3000:], completed.stderr[-2000:]]
    )
    return checks


@pytest.fixture(scope="module")
def our_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """/mcp as the product serves it (stateless; SSE to a client that accepts it) over the plugins, a folder of
    conversations, and the suite's test tools, resources and prompts."""
    folder = tmp_path_factory.mktemp("conversations")
    (folder / "20260101-090000-abc123.md").write_text("💬: What time is it in Paris?\n", encoding="utf-8")
    with serve_in_thread(endpoint_app(conformance_endpoint(conversations=folder))) as port:
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize("scenario", cases("client", CLIENT_SCENARIOS))
def test_client_scenario(scenario: str, tmp_path: Path) -> None:
    name, _, revision = scenario.partition("@")
    command = f"{sys.executable} -m sidespin.conformance"
    arguments = ["client", "--command", command, "--scenario", name]
    if revision:
        arguments += ["--spec-version", revision]
    checks = run_suite(arguments, tmp_path)
    assert any(check["status"] == "SUCCESS" for check in checks)


@pytest.mark.parametrize("scenario", cases("server", SERVER_SCENARIOS))
def test_server_scenario(scenario: str, our_endpoint: str, tmp_path: Path) -> None:
    name, _, revision = scenario.partition("@")
    arguments = ["server", "--url", our_endpoint, "--scenario", name]
    if revision:
        arguments += ["--spec-version", revision]
    checks = run_suite(arguments, tmp_path)
    assert any(check["status"] == "SUCCESS" for check in checks)
