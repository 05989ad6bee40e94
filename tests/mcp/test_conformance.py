"""The official MCP conformance suite against both sides: `python -m sidespin.testing.conformance` and our /mcp.

Expected failures come from conformance-baseline.md (one line and a reason each); all else must pass.

One test per scenario, each judged on its own scenario's checks. To spare a Node start per scenario, the server
side is two CLI runs of the whole server suite (at 2025-11-25 and 2026-07-28, results in one folder per scenario)
that every server test reads from; the client side stays one CLI run per scenario (its exit status also reports a
client that crashed or timed out, which the suite's results folder does not), a few at once on a thread pool. The
`tasks-*` scenarios (an extension's, which the suite runs only when named) run one CLI each, a few at once, against
/mcp serving the suite's task fixtures as a plugins folder.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp_harness import (
    CONFORMANCE,
    NODE,
    ROOT,
    conformance_endpoint,
    endpoint_app,
    tasks_endpoint,
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
# The io.modelcontextprotocol/tasks extension's scenarios, against /mcp serving the suite's task fixtures as a plugins
# folder. An extension scenario runs at 2026-07-28 and only when named (a `--spec-version` run skips it).
TASKS_SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
    "tasks-status-notifications",
    "tasks-required-task-error",
    "tasks-mrtr-composition",
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


# The CLI runs a scenario named without `@revision` at 2025-11-25, or at 2026-07-28 if the suite introduced it there.
DEFAULT_REVISION = "2025-11-25"
# A results folder of `conformance server -o DIR` is DIR/server-NAME-TIMESTAMP/checks.json (one per scenario).
_TIMESTAMP = r"-\d{4}-\d{2}-\d{2}T[\d-]+Z"
# Client scenarios run one CLI each (as before), this many at once: each is a Node and a Python process.
CLIENT_WORKERS = 3


def run_cli(arguments: list[str], output: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    # NODE_COMPILE_CACHE: V8's code cache for the CLI's bundle, shared by the runs (each Node starts ~0.2 s sooner).
    return subprocess.run(
        [str(NODE), str(CONFORMANCE), *arguments, "-o", str(output)],
        cwd=ROOT,
        env={**node_env(), "NODE_COMPILE_CACHE": str(output.parent / "node-compile-cache")},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def load_checks(folder: Path) -> list[dict]:
    return [check for path in folder.glob("**/checks.json") for check in json.loads(path.read_text(encoding="utf-8"))]


def failures(checks: list[dict]) -> list[str]:
    return [
        f"{check['id']}: {check.get('errorMessage', check.get('description'))}"
        for check in checks
        if check["status"] == "FAILURE"
    ]


def cli_tail(completed: subprocess.CompletedProcess[str]) -> list[str]:
    return [completed.stdout[-3000:], completed.stderr[-2000:]]


def client_run(scenario: str, output: Path) -> list[dict]:
    """One `conformance client --scenario` run; its checks, failing with the failed ones (and the CLI's output) on
    a non-zero exit, which also covers a WARNING, a client that timed out or exited with an error."""
    name, _, revision = scenario.partition("@")
    command = f"{sys.executable} -m sidespin.conformance"
    arguments = ["client", "--command", command, "--scenario", name]
    if revision:
        arguments += ["--spec-version", revision]
    completed = run_cli(arguments, output)
    checks = load_checks(output)
    failed = failures(checks)
    assert completed.returncode == 0 and not failed, "\n".join([*failed, *cli_tail(completed)])
    return checks


def selected(request: pytest.FixtureRequest, test: Callable[..., None]) -> list[str]:
    """The scenarios of `test` this session runs (all of them, unless deselected)."""
    return [
        item.callspec.params["scenario"]
        for item in request.session.items
        if getattr(item, "function", None) is test and hasattr(item, "callspec")
    ]


@pytest.fixture(scope="module")
def client_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future]]:
    """Every selected client scenario's run, started at once on a small pool: scenario -> future of its checks."""
    with ThreadPoolExecutor(max_workers=CLIENT_WORKERS) as pool:
        futures = {
            scenario: pool.submit(client_run, scenario, tmp_path_factory.mktemp("client"))
            for scenario in selected(request, test_client_scenario)
        }
        try:
            yield futures
        finally:
            for future in futures.values():
                future.cancel()


@dataclass
class ServerRun:
    """One `conformance server --suite all --spec-version REVISION -o folder` run: every scenario at that revision."""

    revision: str
    folder: Path
    completed: subprocess.CompletedProcess[str]

    def checks(self, name: str) -> list[dict] | None:
        """The scenario's checks, or None if this run has no results for it."""
        pattern = re.compile(rf"server-{re.escape(name)}{_TIMESTAMP}")
        found = [path for path in self.folder.iterdir() if pattern.fullmatch(path.name)]
        if not found:
            return None
        assert len(found) == 1, f"{name} at {self.revision}: several results {found}"
        results = found[0] / "checks.json"
        assert results.is_file(), "\n".join(
            [f"{name} at {self.revision}: the CLI wrote no {results.name} (it failed to run)", *cli_tail(self.completed)]
        )
        return json.loads(results.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def our_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """/mcp as the product serves it (stateless; SSE to a client that accepts it) over the plugins, a folder of
    conversations, and the suite's test tools, resources and prompts."""
    folder = tmp_path_factory.mktemp("conversations")
    (folder / "20260101-090000-abc123.md").write_text("💬: What time is it in Paris?\n", encoding="utf-8")
    with serve_in_thread(endpoint_app(conformance_endpoint(conversations=folder))) as port:
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def server_runs(
    request: pytest.FixtureRequest, our_endpoint: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, ServerRun]:
    """The whole server suite (a superset of our scenarios) once per revision our scenarios need, the runs side by
    side; the CLI's exit status is left out, as it fails when any scenario fails: each test judges its own."""
    revisions = {DEFAULT_REVISION, "2026-07-28"}
    revisions |= {scenario.partition("@")[2] for scenario in selected(request, test_server_scenario)} - {""}

    def run(revision: str) -> ServerRun:
        folder = tmp_path_factory.mktemp(f"server-{revision}")
        arguments = ["server", "--url", our_endpoint, "--suite", "all", "--spec-version", revision]
        # ~40 scenarios, each with the CLI's own 30 s timeout: room for a few to hang before the whole run times out.
        return ServerRun(revision, folder, run_cli(arguments, folder, timeout=600))

    with ThreadPoolExecutor(max_workers=len(revisions)) as pool:
        return {run.revision: run for run in pool.map(run, sorted(revisions))}


@pytest.fixture(scope="module")
def tasks_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future]]:
    """Every selected tasks scenario, one CLI run each (a few at once) against /mcp serving the task fixtures:
    scenario -> future of (its checks, the CLI's run)."""

    def run(scenario: str, url: str) -> tuple[list[dict], subprocess.CompletedProcess[str]]:
        folder = tmp_path_factory.mktemp("tasks")
        completed = run_cli(["server", "--url", url, "--scenario", scenario], folder, timeout=180)
        return load_checks(folder), completed

    with serve_in_thread(endpoint_app(tasks_endpoint())) as port, ThreadPoolExecutor(CLIENT_WORKERS) as pool:
        url = f"http://127.0.0.1:{port}/mcp"
        futures = {scenario: pool.submit(run, scenario, url) for scenario in selected(request, test_tasks_scenario)}
        try:
            yield futures
            for future in futures.values():  # the server stays up until every run is over
                future.exception()
        finally:
            for future in futures.values():
                future.cancel()


@pytest.mark.parametrize("scenario", cases("server", TASKS_SCENARIOS))
def test_tasks_scenario(scenario: str, tasks_runs: dict[str, Future]) -> None:
    """A tasks scenario's checks: no FAILURE, at least one SUCCESS."""
    checks, completed = tasks_runs[scenario].result()
    assert checks, "\n".join([f"the CLI wrote no checks for {scenario}", *cli_tail(completed)])
    failed = failures(checks)
    assert not failed, "\n".join(failed)
    assert any(check["status"] == "SUCCESS" for check in checks)


@pytest.mark.parametrize("scenario", cases("client", CLIENT_SCENARIOS))
def test_client_scenario(scenario: str, client_runs: dict[str, Future]) -> None:
    checks = client_runs[scenario].result()
    assert any(check["status"] == "SUCCESS" for check in checks)


@pytest.mark.parametrize("scenario", cases("server", SERVER_SCENARIOS))
def test_server_scenario(scenario: str, server_runs: dict[str, ServerRun]) -> None:
    """The scenario's checks from the suite run at its revision (`@revision`, else the CLI's default for it: the
    first of 2025-11-25 and 2026-07-28 at which the suite has it): no FAILURE, at least one SUCCESS, as when the
    CLI runs it alone (where a FAILURE is what makes it exit non-zero)."""
    name, _, revision = scenario.partition("@")
    order = [revision] if revision else [DEFAULT_REVISION, "2026-07-28"]
    checks = next((found for rev in order if (found := server_runs[rev].checks(name)) is not None), None)
    assert checks is not None, "\n".join(
        [f"no results for {name} from the suite at {' or '.join(order)}", *cli_tail(server_runs[order[-1]].completed)]
    )
    failed = failures(checks)
    assert not failed, "\n".join(failed)
    assert any(check["status"] == "SUCCESS" for check in checks)
