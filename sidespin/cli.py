"""The `sidespin` command: serve, chat, poke, ask, search, tools, resources, prompts, mcp-serve."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from loguru import logger

from sidespin.approvals import CHOICES
from sidespin.config import Settings, load_settings
from sidespin.errors import SidespinError
from sidespin.events import ApprovalNeeded, ErrorNotice, MalformedCall, TextDelta, ToolFinished, TurnDone, Usage
from sidespin.logs import LINE_FORMAT, setup_logging

__all__ = ["main"]


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "mcp_config", None):
        overrides["mcp_config"] = Path(args.mcp_config)
    return load_settings(getattr(args, "config", None), **overrides)


def _quiet_logging(settings: Settings, verbose: bool = False) -> None:
    """Logs go to the file; the terminal shows only warnings (or everything with --verbose)."""
    setup_logging(settings.logs_dir, console=False)
    logger.add(sys.stderr, level="DEBUG" if verbose else "WARNING", format=LINE_FORMAT)


def _backend_for(args: argparse.Namespace, settings: Settings):
    spec = getattr(args, "model", None)
    if not spec:
        return None
    from sidespin.llm import backend_from_spec

    return backend_from_spec(spec, settings)


async def _one_turn(args: argparse.Namespace, poke_tool: str | None, text: str | None,
                    approve_all: bool = False) -> dict[str, Any]:
    """One turn of a new conversation: `text`, or a Poke of `poke_tool` ("": the default tool it is offered)."""
    from sidespin.engine import Engine

    settings = _settings(args)
    _quiet_logging(settings, args.verbose)
    async with Engine.open(settings, backend=_backend_for(args, settings), approval="auto") as engine:
        if approve_all:
            engine.approve_everything()
        if poke_tool is not None:  # one the model is offered, or a ToolNotOffered saying why not
            poke_tool = engine.poke_tool(None, poke_tool or None)
        conversation = engine.conversation()
        started = time.perf_counter()
        calls: list[dict[str, Any]] = []
        notices: list[str] = []
        visible: list[str] = []
        usage: Usage | None = None
        async for event in engine.events(conversation, text, poke_tool=poke_tool):
            if isinstance(event, Usage):
                usage = usage.plus(event) if usage is not None else event
            if isinstance(event, TextDelta):
                visible.append(event.text)
                if not args.json:
                    print(event.text, end="", flush=True)
            elif isinstance(event, ToolFinished):
                result = event.result
                calls.append({
                    "tool": result.call.name,
                    "arguments": result.call.arguments,
                    "result": result.output if result.ok else None,
                    "error": result.error,
                    "seconds": round(result.seconds, 4),
                })
                if not args.json:
                    outcome = json.dumps(result.output, ensure_ascii=False) if result.ok else f"error: {result.error}"
                    print(f"\n[tool] {result.call.name}({result.call.arguments_json()}) -> {outcome}", file=sys.stderr)
            elif isinstance(event, ApprovalNeeded):
                # One turn and no person to ask: the call is reported, not run, and not dropped silently.
                calls.append({"tool": event.call.name, "arguments": event.call.arguments, "result": None,
                              "error": None, "held": True, "why": event.why, "seconds": 0.0})
                why = f" ({event.why})" if event.why else ""
                notices.append(f"{event.call.name} was not run: it waits for a person's approval{why}; answer it "
                               "in `sidespin chat` or on the page, or pass --yes")
            elif isinstance(event, MalformedCall):
                notices.append(f"malformed tool call: {event.reason}")
            elif isinstance(event, ErrorNotice):
                notices.append(event.message)
            elif isinstance(event, TurnDone) and not args.json:
                print()
        seconds = time.perf_counter() - started
    for notice in notices:
        print(f"warning: {notice}", file=sys.stderr)
    used = None if usage is None else {"input": usage.input, "output": usage.output, "context": usage.context,
                                       "window": usage.window, "counted": usage.counted}
    return {"calls": calls, "visible_text": "".join(visible), "seconds": round(seconds, 3), "notices": notices,
            "usage": used}


def cmd_poke(args: argparse.Namespace) -> int:
    outcome = asyncio.run(_one_turn(args, poke_tool=args.tool or "", text=None))
    first = outcome["calls"][0] if outcome["calls"] else {}
    if args.json:
        print(json.dumps({
            "tool": first.get("tool"),
            "arguments": first.get("arguments"),
            "result": first.get("result"),
            "error": first.get("error"),
            "visible_text": outcome["visible_text"],
            "seconds": outcome["seconds"],
        }, ensure_ascii=False, indent=2))
    return 0 if first and not first.get("error") else 1


def cmd_ask(args: argparse.Namespace) -> int:
    outcome = asyncio.run(_one_turn(args, poke_tool=None, text=args.text, approve_all=args.yes))
    if args.json:
        print(json.dumps({
            "tool_calls": [{k: c[k] for k in ("tool", "arguments", "result", "error", "held", "why") if k in c}
                           for c in outcome["calls"]],
            "visible_text": outcome["visible_text"],
            "seconds": outcome["seconds"],
            "notices": outcome["notices"],
            "usage": outcome["usage"],
        }, ensure_ascii=False, indent=2))
    return 0


async def _list_tools(args: argparse.Namespace) -> tuple[list[dict[str, Any]], Any]:
    """Plugins and MCP servers' tools, each saying whether the model is offered it, and the plugins as loaded
    (`sidespin.offer.Plugins`); no model is loaded to list them."""
    import contextlib

    from sidespin.engine import open_mcp
    from sidespin.offer import plugins_for
    from sidespin.tools import ToolRegistry

    settings = _settings(args)
    _quiet_logging(settings, args.verbose)
    plugins = plugins_for(settings)
    registry = ToolRegistry(plugins.offered)
    async with contextlib.AsyncExitStack() as stack:
        manager = await open_mcp(stack, settings, registry, strict=False)
        for name, reason in (manager.failures if manager else {}).items():
            print(f"warning: MCP server {name!r} failed: {reason}", file=sys.stderr)
        held = plugins.held
        return [
            {"name": t.name, "source": t.source, "offered": t not in held, "description": t.description.split("\n")[0],
             "parameters": list(t.parameters)}
            for t in [*registry, *held]
        ], plugins


def _rung_line(args: argparse.Namespace) -> str:
    """Which rung of the ladder the configured model uses, without loading it."""
    from sidespin.rungs import choose_rung, rungs_of
    from sidespin.llm import make_backend

    settings = _settings(args)
    backend = _backend_for(args, settings) or make_backend(settings)
    if settings.tool_mode != "auto":
        return f"tool rung: {settings.tool_mode} (config.json / SIDESPIN_TOOL_MODE)"
    return f"tool rung: {choose_rung(backend, 'auto').name} ({backend.name} offers {', '.join(rungs_of(backend))})"


def cmd_tools(args: argparse.Namespace) -> int:
    """Every tool the model is offered, by source, then the plugins it is not offered and why."""
    from sidespin.offer import by_source

    rows, plugins = asyncio.run(_list_tools(args))
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    print(_rung_line(args))
    if plugins.held:
        print(f"plugins: {plugins.folder} (the demos are not offered to the model: see below)")
    else:
        print(f"plugins: {plugins.folder}" if plugins.folder else "plugins: off (config.json \"plugins\": false)")
    offered = [row for row in rows if row["offered"]]
    counts = by_source(row["source"] for row in offered)
    sources = ", ".join(f"{count} from {name}" for name, count in counts.items())
    print(f"offered to the model: {len(offered)} tool{'' if len(offered) == 1 else 's'}"
          + (f" ({sources})" if sources else ""))
    shown = [{**row, "arguments": ", ".join(row["parameters"])} for row in offered]
    _print_table(shown, [("name", "tool"), ("source", "source"), ("arguments", "arguments"),
                         ("description", "description")])
    held = [row["name"] for row in rows if not row["offered"]]
    if held:
        print(f"not offered to the model: {', '.join(held)}\n  {plugins.why}")
    return 0


async def _with_mcp(args: argparse.Namespace, use: Callable[[Any], Awaitable[Any]]) -> Any:
    """Connect mcp.json's servers (no model, not even its module, is loaded), run `use(manager)`, close them."""
    from sidespin.errors import ConfigError
    from sidespin.mcp import MCPManager, load_mcp_config

    settings = _settings(args)
    _quiet_logging(settings, args.verbose)
    if not Path(settings.mcp_config).exists():
        raise ConfigError(f"no MCP servers: {settings.mcp_config} does not exist")
    async with MCPManager(load_mcp_config(settings.mcp_config), token_dir=Path(settings.data_dir) / "oauth") as manager:
        return await use(manager)


async def _servers(args: argparse.Namespace) -> list[dict[str, Any]]:
    async def use(manager: Any) -> list[dict[str, Any]]:
        rows = [{"server": name, **state, "tool_names": [t.name for t in manager.tools(name)] if state["status"] ==
                 "ready" else []} for name, state in manager.state().items()]
        rows += [{"server": c.name, "status": "disabled", "tools": 0, "error": None, "transport": c.transport,
                  "protocol": None, "tool_names": [], "notices": [], "trust_read_only": c.trust_read_only}
                 for c in manager.disabled]
        return rows

    return await _with_mcp(args, use)


def cmd_servers(args: argparse.Namespace) -> int:
    """Each MCP server of mcp.json: status, transport, protocol, tools, and why a failed one failed."""
    rows = asyncio.run(_servers(args))
    failed = 1 if any(row["status"] == "failed" for row in rows) else 0
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return failed
    shown = [{**row, "names": ", ".join(row["tool_names"])} for row in rows]
    _print_table(shown, [("server", "server"), ("status", "status"), ("transport", "transport"),
                         ("protocol", "protocol"), ("tools", "tools"), ("names", "tool names")])
    for row in rows:
        if row["error"]:
            print(f"\n{row['server']} {row['status']}:\n  " + row["error"].replace("\n", "\n  "))
        for notice in row.get("notices") or []:
            print(f"\n{row['server']}: {notice}")
    return failed


def _pick_server(rows: list[dict[str, Any]], key: str, value: str) -> str:
    """The one server that lists `value` (or the only server listing anything of the kind)."""
    from sidespin.errors import MCPServerError

    servers = sorted({row["server"] for row in rows if row.get(key) == value}) or sorted({r["server"] for r in rows})
    if len(servers) != 1:
        raise MCPServerError(f"say which server with --server (candidates: {', '.join(servers) or 'none'})")
    return servers[0]


async def _resources(args: argparse.Namespace) -> dict[str, Any]:
    async def use(manager: Any) -> dict[str, Any]:
        catalog = await manager.catalog(fresh=True)
        for problem in catalog.problems:
            print(f"warning: {problem}", file=sys.stderr)
        if not args.read:
            # every row has server, uri, name and mimeType; a template's uri is null, its uriTemplate says it
            templates = [{"server": row["server"], "uri": None, **row} for row in catalog.templates]
            return {"rows": [*catalog.resources, *templates]}
        server = args.server or _pick_server(catalog.resources, "uri", args.read)
        read = await manager.read_resource(server, args.read)
        return {"server": server, "uri": args.read, "text": read.text, "attachments": read.attachments}

    return await _with_mcp(args, use)


def cmd_resources(args: argparse.Namespace) -> int:
    """List every MCP server's resources and resource templates, or read one resource (--read URI)."""
    answer = asyncio.run(_resources(args))
    if args.json:
        print(json.dumps(answer.get("rows", answer), indent=2, ensure_ascii=False))
    elif args.read:
        print(answer["text"])
    else:
        rows = [{**row, "at": row.get("uri") or row["uriTemplate"]} for row in answer["rows"]]
        _print_table(rows, [("server", "server"), ("at", "uri (or template)"), ("mimeType", "type"), ("name", "name")])
    return 0


async def _prompts(args: argparse.Namespace) -> dict[str, Any]:
    from sidespin.errors import ConfigError

    arguments: dict[str, str] = {}
    for pair in args.arg:
        key, equals, value = pair.partition("=")
        if not equals or not key:
            raise ConfigError(f"--arg wants KEY=VALUE, not {pair!r}")
        arguments[key] = value

    async def use(manager: Any) -> dict[str, Any]:
        catalog = await manager.catalog(fresh=True)
        for problem in catalog.problems:
            print(f"warning: {problem}", file=sys.stderr)
        if not args.get:
            return {"rows": catalog.prompts}
        server = args.server or _pick_server(catalog.prompts, "name", args.get)
        messages = await manager.get_prompt(server, args.get, arguments)
        return {"server": server, "name": args.get, "messages": [vars(message) for message in messages]}

    return await _with_mcp(args, use)


def cmd_prompts(args: argparse.Namespace) -> int:
    """List every MCP server's prompts and their arguments, or fill one in (--get NAME --arg KEY=VALUE)."""
    answer = asyncio.run(_prompts(args))
    if args.json:
        print(json.dumps(answer.get("rows", answer), indent=2, ensure_ascii=False))
    elif args.get:
        for message in answer["messages"]:
            print(f"{message['role']}: {message['text']}")
    else:
        for row in answer["rows"]:
            row["args"] = ", ".join(a["name"] + ("" if a["required"] else "?") for a in row["arguments"])
        _print_table(answer["rows"], [("server", "server"), ("name", "name"), ("args", "arguments (? optional)"),
                                      ("description", "description")])
    return 0


def _print_table(rows: list[dict[str, Any]], columns: list[tuple[str, str]]) -> None:
    """Rows as columns under a header (`columns`: key, title): wrapped to a terminal's width, bold header;
    to a pipe or a file one line a row, no colour, so a script can split it on whitespace."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, header_style="bold")
    for _, title in columns:
        table.add_column(title, overflow="fold")
    for row in rows:
        table.add_row(*(Text("" if row.get(key) is None else str(row[key])) for key, _ in columns))
    console = Console(highlight=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=1_000_000)  # no wrapping: the table keeps its natural width
    console.print(table)


def cmd_serve(args: argparse.Namespace) -> int:
    if args.host:
        os.environ["SIDESPIN_HOST"] = args.host
    if args.port:
        os.environ["SIDESPIN_PORT"] = str(args.port)
    from sidespin.web.app import create_app
    from sidespin.web.serve import serve

    settings = _settings(args)
    serve(create_app(settings), settings.host, settings.port, log_level="warning")
    return 0


def cmd_mcp_serve(args: argparse.Namespace) -> int:
    from sidespin.mcp.server import main as serve_stdio_main

    return serve_stdio_main(_settings(args)) or 0


def cmd_search(args: argparse.Namespace) -> int:
    """Search every conversation's text (the index in the data directory; no model is loaded)."""
    from datetime import datetime

    from sidespin.search import INDEX_FILE, SearchIndex
    from sidespin.transcript import TranscriptStore

    settings = _settings(args)
    _quiet_logging(settings, args.verbose)
    with SearchIndex(Path(settings.data_dir) / INDEX_FILE, TranscriptStore(settings.conversations_dir)) as index:
        hits = index.search(args.text, limit=args.limit)
    rows = [{"id": hit.conversation, "title": hit.title, "snippet": hit.text, "turn": hit.turn, "role": hit.role,
             "when": datetime.fromtimestamp(hit.when).astimezone().isoformat(timespec="seconds")} for hit in hits]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    elif rows:
        shown = [{**row, "at": row["when"][:16].replace("T", " ")} for row in rows]
        _print_table(shown, [("at", "when"), ("id", "conversation"), ("title", "title"), ("snippet", "text")])
    return 0 if hits else 1


def cmd_chat(args: argparse.Namespace) -> int:
    from sidespin.terminal import run_chat

    return run_chat(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sidespin", description="A local-first chat in which a language model uses tools.")
    parser.add_argument("--config", help="config.json to read (default: config.json beside the program)")
    parser.add_argument("--mcp-config", help="mcp.json to read (default: mcp.json beside the program)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every log line on the terminal")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="start the web app (same as ./run)")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1, or SIDESPIN_HOST)")
    serve.add_argument("--port", type=int, help="port (default 5001, or SIDESPIN_PORT)")
    serve.set_defaults(func=cmd_serve)

    chat = sub.add_parser("chat", help="chat in the terminal at the `prompt -> ` prompt")
    chat.add_argument("model", nargs="?", default="",
                      help="a GGUF path, ollama:NAME, openai:NAME, anthropic:NAME; omitted: the embedded model")
    chat.add_argument("--turns", type=int, default=3, help="turns kept in memory and sent to the model (default 3)")
    chat.add_argument("--transcript", help="markdown transcript to write, or to resume if it exists")
    chat.add_argument("--approve", action="store_true", help=f"ask before each tool call ({', '.join(CHOICES)})")
    chat.set_defaults(func=cmd_chat)

    poke = sub.add_parser("poke", help="one Poke: the salted one-shot prompt asking the model to call a tool")
    poke.add_argument("--json", action="store_true", help="print {tool, arguments, result, visible_text, seconds}")
    poke.add_argument("--tool", help="the tool to ask for, one the model is offered (default get_cat_fact if it "
                      "is, else the first)")
    poke.add_argument("--model", help="model spec as for `chat` (default: the configured backend)")
    poke.set_defaults(func=cmd_poke)

    ask = sub.add_parser("ask", help="one non-interactive turn with every tool available")
    ask.add_argument("text", help="what to ask")
    ask.add_argument("--json", action="store_true", help="print {tool_calls, visible_text, seconds, usage}")
    ask.add_argument("--model", help="model spec as for `chat` (default: the configured backend)")
    ask.add_argument("--yes", action="store_true",
                     help="run calls that would wait for a person's approval (destructive tools, calls that follow a "
                          "tool result, paths outside a server's folders) without asking")
    ask.set_defaults(func=cmd_ask)

    search = sub.add_parser("search", help="search the text of every conversation (full text, SQLite FTS5)")
    search.add_argument("text", help='words to find; FTS5 syntax works too: "a phrase", OR, NOT, prefix*')
    search.add_argument("--json", action="store_true", help="print a list of {id, title, snippet, when, turn, role}")
    search.add_argument("--limit", type=int, default=50, help="at most this many messages (default 50)")
    search.set_defaults(func=cmd_search)

    tools = sub.add_parser("tools", help="list every tool (plugins and MCP servers) with its source")
    tools.add_argument("--json", action="store_true", help="print the list as JSON")
    tools.set_defaults(func=cmd_tools)

    servers = sub.add_parser("servers", help="each MCP server's status, tools and error (its stderr tail)")
    servers.add_argument("--json", action="store_true",
                         help="print a list of {server, status, transport, protocol, tools, tool_names, error}")
    servers.set_defaults(func=cmd_servers)

    resources = sub.add_parser("resources", help="list the MCP servers' resources and templates, or read one")
    resources.add_argument("--json", action="store_true",
                           help="print a list of {server, uri, name, mimeType, description} (templates: uriTemplate)")
    resources.add_argument("--read", metavar="URI", help="print this resource's text instead of the list")
    resources.add_argument("--server", help="the server to read from (default: the one that lists the URI)")
    resources.set_defaults(func=cmd_resources)

    prompts = sub.add_parser("prompts", help="list the MCP servers' prompts and their arguments, or fill one in")
    prompts.add_argument("--json", action="store_true",
                         help="print a list of {server, name, description, arguments: [{name, description, required}]}")
    prompts.add_argument("--get", metavar="NAME", help="print this prompt's messages instead of the list")
    prompts.add_argument("--arg", action="append", default=[], metavar="KEY=VALUE", help="a prompt argument (repeat)")
    prompts.add_argument("--server", help="the server to ask (default: the one that lists the prompt)")
    prompts.set_defaults(func=cmd_prompts)

    mcp_serve = sub.add_parser(
        "mcp-serve", help="serve the plugins, the conversations (read-only) and the poke prompt over MCP stdio"
    )
    mcp_serve.set_defaults(func=cmd_mcp_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SidespinError as error:  # the top edge: a message a person can act on
        print(f"sidespin: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
