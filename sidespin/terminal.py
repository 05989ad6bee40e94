"""`sidespin chat`: the terminal chat at the `prompt -> ` prompt (the mcp-chat seed).

Replies stream; a tool call interrupts the stream with a panel (time, tool,
arguments, result or error, duration), then the stream resumes. `bye`,
`quit`, Ctrl-C or Ctrl-D end the program cleanly with exit status 0.

A remote MCP server that needs OAuth sign-in prints its URL to open; the browser comes back to
`http://127.0.0.1:<port>/oauth/callback`, served here by a loopback listener of our own for the
session (the same redirect URI as the web app's, so one registered client serves both). When the
web app holds that port, the person signs in from its page instead. Tokens live in the data
directory either way, so a sign-in made by one is used by the other. The prompt is read in a
thread so that sign-ins complete (and servers connect) while it waits.

MCP resources and prompts (`sidespin.mcp.attach`, as the page's composer):
`@URI` anywhere in a line attaches that resource (a word that starts with `@` and holds
a `:`; read from the server that lists it); `/name arg=value …` (shell quoting) runs a
prompt and sends its rendered text; `@` alone lists the resources, `/` alone the prompts.
An unknown URI or prompt, or one that cannot be read, is said in red and nothing is sent.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import json
import re
import shlex
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from loguru import logger
from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.status import Status
from rich.table import Table
from rich.text import Text

from sidespin.approvals import CHOICES, MEANINGS
from sidespin.config import Settings, load_settings
from sidespin.errors import AttachmentRefused, BadAnswer, MCPServerError, QuestionError, SidespinError
from sidespin.events import (
    ErrorNotice, Event, MalformedCall, ModelLoading, QuestionAsked, TextDelta, Thought, ToolFinished, ToolStarted,
    TurnDone, Usage,
)
from sidespin.logs import setup_logging
from sidespin.mcp.attach import Composed, compose, find_resource, prompt_text
from sidespin.questions import Field, QuestionDesk, fields, summary
from sidespin.tools import ToolCall, ToolResult

__all__ = ["run_chat", "read_line", "PROMPT"]

PROMPT = "prompt -> "
EXIT_WORDS = {"bye", "quit", "exit"}


class Keyboard:
    """The lines a person types, read one at a time by a daemon thread, so the event loop (sign-ins,
    server connections, a running call) goes on while a prompt waits, and a prompt left waiting never
    holds the program open.

    A prompt can be abandoned: a server's question whose call ended. Its thread still waits for a line,
    and the next prompt takes that read over (printing its own prompt), so the line typed after it goes
    where the person sees it going. A line that reached an abandoned prompt before any other asked
    is dropped, as typed to a question that is gone.
    """

    def __init__(self) -> None:
        self._reading: concurrent.futures.Future[str] | None = None

    def _read(self, prompt: str) -> concurrent.futures.Future[str]:
        reading = self._reading
        if reading is not None and not reading.done():
            print(f"\n{prompt}", end="", flush=True)
            return reading
        if reading is not None and reading.exception() is None:
            logger.info("TERMINAL_LINE_DROPPED {} chars typed to a question that is gone", len(reading.result()))
        reading = concurrent.futures.Future()

        def read() -> None:
            try:
                reading.set_result(input(prompt))
            except (EOFError, OSError) as error:
                reading.set_exception(EOFError(str(error)))

        threading.Thread(target=read, name="terminal-line", daemon=True).start()
        self._reading = reading
        return reading

    async def line(self, prompt: str) -> str:
        """The next line, awaited; a cancelled wait leaves the read to the next prompt."""
        text = await asyncio.shield(asyncio.wrap_future(self._read(prompt)))
        self._reading = None
        return text

    def line_now(self, prompt: str) -> str:
        """The next line, blocking (outside the event loop)."""
        text = self._read(prompt).result()
        self._reading = None
        return text


KEYBOARD = Keyboard()


_ACTION_KEYS = {"a": "accept", "accept": "accept", "d": "decline", "decline": "decline", "c": "cancel", "cancel": "cancel"}


def _field_prompt(spec: Field) -> str:
    """`name (integer 1–100, default 42) *: ` — the type, limits, choices and default of a field."""
    about = {"choice": "one of " + ", ".join(v for v, _ in spec.options),
             "choices": "any of " + ", ".join(v for v, _ in spec.options) + ", separated by commas",
             "boolean": "yes/no"}.get(spec.kind, spec.format or spec.kind)
    if spec.minimum is not None or spec.maximum is not None:
        about += f" {'' if spec.minimum is None else f'{spec.minimum:g}'}–{'' if spec.maximum is None else f'{spec.maximum:g}'}"
    if spec.default is not None:
        default = ",".join(map(str, spec.default)) if isinstance(spec.default, list) else str(spec.default)
        about += f", Enter for {default}"
    return f"   {spec.title} ({about}){' *' if spec.required else ''}: "


def _default_text(spec: Field) -> str:
    if spec.default is None:
        return ""
    if isinstance(spec.default, list):
        return ",".join(map(str, spec.default))
    return str(spec.default).lower() if isinstance(spec.default, bool) else str(spec.default)


class TerminalChat:
    """Draws rally events on a terminal; holds what persists between events of one turn."""

    def __init__(self, console: Console, line: Callable[[str], Awaitable[str]] = KEYBOARD.line) -> None:
        self.console = console
        self.line = line  # how a question's answers are read (a test gives scripted lines)
        self.started: dict[str, datetime] = {}
        self.mid_line = False
        self.loading: Status | None = None  # the progress line of the model this turn waits for
        self.usage: Usage | None = None  # the turn's tokens, every round added up

    def draw(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.console.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, Thought) and event.text.strip():
            self.break_line()
            self.console.print(Text("💭 " + event.text.strip(), style="dim italic"))
        elif isinstance(event, ToolStarted):
            self.started[event.call.id] = datetime.now()
        elif isinstance(event, ToolFinished):
            self.break_line()
            self.console.print(self.tool_panel(event.result))
        elif isinstance(event, MalformedCall):
            self.break_line()
            self.console.print(Panel(Text(event.raw), title=f"malformed tool call: {event.reason}", border_style="red"))
        elif isinstance(event, ErrorNotice):
            self.break_line()
            self.console.print(Text(f"⚠ {event.message}", style="bold red"))
        elif isinstance(event, ModelLoading):
            self.show_loading(event)
        elif isinstance(event, Usage):
            self.usage = self.usage.plus(event) if self.usage is not None else event
        elif isinstance(event, TurnDone):
            self.break_line()
            self.show_loading(None)
            if self.usage is not None:
                self.console.print(Text(self.usage.line(), style="dim"))
            self.usage = None

    def show_loading(self, event: ModelLoading | None) -> None:
        """A progress line while the conversation's model loads: elapsed seconds (no backend says how far)."""
        if event is None or event.done:
            if self.loading is not None:
                self.loading.stop()
                self.loading = None
            if event is not None:
                self.console.print(Text(f"model {event.model} ready in {event.seconds:.1f} s", style="dim"))
            return
        line = f"loading model {event.model}… {event.seconds:.0f} s"
        if self.loading is None:
            self.loading = self.console.status(line)
            self.loading.start()
        else:
            self.loading.update(line)

    def break_line(self) -> None:
        if self.mid_line:
            self.console.print()
            self.mid_line = False

    def tool_panel(self, result: ToolResult) -> Panel:
        call = result.call
        table = Table.grid(padding=(0, 1))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        when = self.started.get(call.id, datetime.now())
        table.add_row("time", when.strftime("%H:%M:%S"))
        table.add_row("tool", call.name)
        table.add_row("arguments", Text(json.dumps(call.arguments, ensure_ascii=False)))
        if result.ok:
            table.add_row("result", Text(_shorten(result.text())))
        else:
            table.add_row("error", Text(result.error or "", style="red"))
        table.add_row("duration", f"{result.seconds:.3f} s")
        style = "green" if result.ok else "red"
        return Panel(table, title=f"🛠  {call.name}", border_style=style, expand=False)

    async def answer_question(self, question: QuestionAsked, desk: QuestionDesk) -> None:
        """Ask a server's question here: its message, each field, then accept, decline or cancel.

        The answer is read by the same validator as the page's form; a bad one is asked again.
        If the call ends first (its timeout, Ctrl-C), the asking stops and says so.
        """
        self.break_line()
        shown = Text(question.message)
        if question.url:
            shown.append(f"\nopen: {question.url}", style="underline")
        self.console.print(Panel(shown, title=f"❔ {question.server} asks", border_style="yellow", expand=False))
        asking = asyncio.ensure_future(self._ask(question, desk))
        closed = asyncio.ensure_future(desk.wait_closed(question.question_id))
        await asyncio.wait({asking, closed}, return_when=asyncio.FIRST_COMPLETED)
        closed.cancel()
        if not asking.done():
            asking.cancel()
            self.console.print(Text(summary(None, None), style="red"))
            return
        asking.result()

    async def _ask(self, question: QuestionAsked, desk: QuestionDesk) -> None:
        while True:
            typed: dict[str, str] = {}
            for spec in fields(question.schema):
                typed[spec.name] = (await self.line(_field_prompt(spec))).strip() or _default_text(spec)
            action = _ACTION_KEYS.get((await self.line(">> accept, decline or cancel? [a/d/c]: ")).strip().lower())
            if action is None:
                self.console.print("answer a (accept), d (decline) or c (cancel)", markup=False)
                continue
            try:
                content = desk.answer(question.question_id, action, typed)
            except BadAnswer as error:
                self.console.print(Text("\n".join(["not taken:", *error.problems]), style="red"))
                continue
            except QuestionError as error:
                self.console.print(Text(str(error), style="red"))
                return
            self.console.print(Text(summary(action, content), style="dim"))
            return

    def ask_choice(self, call: ToolCall) -> str:
        self.console.print(Panel(Text(json.dumps(call.arguments, ensure_ascii=False)), title=f"❓ {call.name}", border_style="yellow", expand=False))
        while True:
            answer = KEYBOARD.line_now(f">> Please choose ({'/'.join(CHOICES)}): ").strip()
            if answer in CHOICES:
                return answer
            self.console.print("\n".join(["choose one of:", *(f"  {key:<3} {meaning}" for key, meaning in MEANINGS.items())]),
                               markup=False)


_RESOURCE_WORD = re.compile(r"(?<!\S)@(\S*:\S+)")  # @URI: a word that starts with @ and holds a scheme


@dataclass
class Line:
    """What a typed line asks for: a message to send (its resources read), and what to show first."""

    message: Composed | None
    show: str = ""


async def read_line(manager: Any, text: str, *, max_chars: int, conversation: str | None = None) -> Line:
    """A typed line as the message to send: `/` and `@` alone list, `/name a=b` renders a prompt,
    `@URI` attaches a resource; a resource attached earlier in `conversation` that changed goes again.
    `AttachmentRefused` or `MCPServerError` say why nothing is sent."""
    changed = manager.subscriptions.changed(conversation) if manager is not None and conversation else []
    if not changed and not text.startswith("/") and not _RESOURCE_WORD.search(text) and text != "@":
        return Line(Composed(text))
    if manager is None:
        raise AttachmentRefused("no MCP servers are configured (mcp.json): there are no prompts or resources")
    catalog = await manager.catalog()
    problems = "".join(f"\n⚠ {problem}" for problem in catalog.problems)
    if text == "/":
        rows = [f"/{p['name']} {' '.join(_argument(a) for a in p['arguments'])}  ({p['server']}) {p['description'] or ''}"
                for p in catalog.prompts]
        return Line(None, "\n".join(rows or ["no prompts"]) + problems)
    if text == "@":
        rows = [f"@{r['uri']}  ({r['server']}) {r['name']}" for r in catalog.resources]
        rows += [f"@{t['uriTemplate']}  ({t['server']}) template: fill in the {{…}}" for t in catalog.templates]
        return Line(None, "\n".join(rows or ["no resources"]) + problems)
    if text.startswith("/"):
        return await _run_prompt(manager, catalog.prompts, text)
    refs = [find_resource(catalog, match.group(1)) for match in _RESOURCE_WORD.finditer(text)]
    typed = re.sub(r"[ \t]{2,}", " ", _RESOURCE_WORD.sub("", text)).strip()
    composed = await compose(manager, typed, refs, max_chars=max_chars, conversation=conversation)
    sent = [row["uri"] + (" (changed)" if row.get("changed") else "") for row in composed.note.get("attached", [])]
    return Line(composed, "📎 " + ", ".join(sent) if sent else "")


def _argument(argument: dict[str, Any]) -> str:
    return f"{argument['name']}=…" if argument["required"] else f"[{argument['name']}=…]"


async def _run_prompt(manager: Any, prompts: list[dict[str, Any]], text: str) -> Line:
    try:
        words = shlex.split(text[1:])
    except ValueError as error:
        raise AttachmentRefused(f"cannot read the line: {error}") from None
    name, pairs = (words[0], words[1:]) if words else ("", [])
    found = [row for row in prompts if row["name"] == name]
    if not found:
        raise AttachmentRefused(f"no prompt named {name!r}; `/` alone lists the prompts")
    if any("=" not in pair for pair in pairs):
        raise AttachmentRefused(f"write each argument as name=value: /{name} "
                                + " ".join(_argument(a) for a in found[0]["arguments"]))
    arguments = dict(pair.split("=", 1) for pair in pairs)
    missing = [a["name"] for a in found[0]["arguments"] if a["required"] and not arguments.get(a["name"])]
    if missing:
        raise AttachmentRefused(f"/{name} needs {', '.join(missing)}: /{name} "
                                + " ".join(_argument(a) for a in found[0]["arguments"]))
    rendered = prompt_text(await manager.get_prompt(found[0]["server"], name, arguments))
    return Line(Composed(rendered), f"/{name} ({found[0]['server']}):\n{rendered}")


def _shorten(text: str, limit: int = 1200) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "mcp_config", None):
        overrides["mcp_config"] = Path(args.mcp_config)
    return load_settings(getattr(args, "config", None), **overrides)


def run_chat(args: argparse.Namespace) -> int:
    """The whole terminal session; start-up failures are fatal and clear, the rest is reported."""
    console = Console(highlight=False)
    settings = _settings(args)
    setup_logging(settings.logs_dir, console=bool(getattr(args, "verbose", False)))
    with asyncio.Runner() as runner:
        stack = contextlib.AsyncExitStack()
        try:
            # llama.cpp reports no load progress of its own: an indeterminate bar and the elapsed time show it goes on
            with _load_line(console, "loading the model and the tools (the first start also picks the tool rung)"):
                started = time.monotonic()
                engine = runner.run(_open_engine(stack, args, settings))
            console.print(Text(f"ready in {time.monotonic() - started:.1f} s · tool rung: {engine.rung.name} "
                               f"({engine.rung.source})", style="dim"))
        except SidespinError as error:
            runner.run(stack.aclose())
            console.print(f"[bold red]sidespin: cannot start:[/] {error}")
            return 2
        try:
            _loop(runner, engine, args, console)
        except (KeyboardInterrupt, EOFError):
            console.print()
        finally:
            with contextlib.suppress(KeyboardInterrupt):
                runner.run(stack.aclose())
            console.print("bye")
    return 0


def _load_line(console: Console, what: str) -> Progress:
    """A progress line with a bar that only moves (there is no percentage to show) and the seconds so far."""
    line = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                    console=console, transient=True)
    line.add_task(what, total=None)
    return line


async def _open_engine(stack: contextlib.AsyncExitStack, args: argparse.Namespace, settings: Settings):
    from sidespin.engine import Engine
    from sidespin.llm import backend_from_spec

    backend = backend_from_spec(args.model, settings) if args.model else None
    approval = "ask" if args.approve else "auto"
    sign_ins = await _sign_in_listener(stack, settings, Console(highlight=False))
    engine = await stack.enter_async_context(
        Engine.open(settings, backend=backend, approval=approval, strict_mcp=True, sign_ins=sign_ins)
    )
    return engine


async def _sign_in_listener(stack: contextlib.AsyncExitStack, settings: Settings, console: Console) -> Any:
    """Sign-ins that print their URL, and the loopback listener their callback comes back to (while the chat runs)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from sidespin.mcp.auth import CALLBACK_PATH, PendingSignIn, SignInError, SignIns, redirect_uri

    listening = True

    async def announce(sign_ins: SignIns, pending: PendingSignIn) -> None:
        where = "" if listening else (f" (the web app on port {settings.port} takes the callback: "
                                      f"or sign in from its page, then start the chat again)")
        console.print(Text(f"MCP server {pending.server!r} needs sign-in: open {pending.url}{where}", style="yellow"))

    sign_ins = SignIns(redirect_uri(settings.port), opener=announce)

    async def callback(request: Request) -> PlainTextResponse:
        query = request.query_params
        try:
            server = sign_ins.finish(query.get("state", ""), query.get("code"), query.get("iss"), query.get("error"))
        except SignInError as error:
            return PlainTextResponse(f"Sign-in failed: {error}", status_code=400)
        if query.get("error"):
            return PlainTextResponse(f"Sign-in to {server} was refused: {query['error']}", status_code=400)
        console.print(Text(f"signed in to {server}", style="green"))
        return PlainTextResponse(f"Signed in to {server} - you can close this tab and go back to the terminal.")

    app = Starlette(routes=[Route(CALLBACK_PATH, callback)])
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="off"))
    sockets = [socket.socket()]
    try:
        sockets[0].setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sockets[0].bind(("127.0.0.1", settings.port))
    except OSError:  # the port is taken: the web app is running there
        sockets[0].close()
        listening = False
        return sign_ins
    serving = asyncio.create_task(server.serve(sockets=sockets), name="oauth-callback-listener")

    async def stop() -> None:
        server.should_exit = True
        await asyncio.wait({serving}, timeout=5)
        sockets[0].close()

    stack.push_async_callback(stop)
    return sign_ins


def _loop(runner: asyncio.Runner, engine: Any, args: argparse.Namespace, console: Console) -> None:
    chat = TerminalChat(console)
    conversation = engine.conversation_at(Path(args.transcript)) if args.transcript else engine.conversation()
    tools = ", ".join(engine.registry.names()) or "none"
    console.print(Text(f"sidespin · {engine.model_name} · tools: {tools}", style="dim"))
    console.print(Text(f"transcript: {engine.transcript_path(conversation)} · bye, quit or Ctrl-D to leave", style="dim"))
    decisions: dict[str, bool] | None = None
    while True:
        text, note = None, None
        if decisions is None:
            text = runner.run(KEYBOARD.line(PROMPT)).strip()
            if not text:
                continue
            if text.lower() in EXIT_WORDS:
                return
            try:
                line = runner.run(read_line(engine.mcp, text, max_chars=engine.settings.max_result_chars,
                                            conversation=conversation.id))
            except (AttachmentRefused, MCPServerError) as error:
                console.print(Text(f"⚠ {error} (nothing was sent)", style="bold red"))
                continue
            if line.show:
                console.print(Text(line.show, style="dim"))
            if line.message is None:
                continue
            text, note = line.message.text, line.message.note or None
        outcome = runner.run(_play(engine, conversation, text, decisions, chat, args.turns, note))
        decisions = _decide(engine, conversation, outcome.pending, chat) if outcome.reason == "approval" else None


async def _play(
    engine: Any, conversation: Any, text: str | None, decisions: dict[str, bool] | None, chat: TerminalChat, turns: int,
    note: dict[str, Any] | None = None,
) -> TurnDone:
    done = TurnDone(reason="error")
    # aclosing: on Ctrl-C the turn's generator closes at once, so the transcript gets what streamed
    turn = engine.events(conversation, text, decisions=decisions, keep_turns=turns, note=note)
    async with contextlib.aclosing(turn) as events:
        async for event in events:
            chat.draw(event)
            if isinstance(event, QuestionAsked) and engine.mcp is not None:
                await chat.answer_question(event, engine.mcp.questions)
            if isinstance(event, TurnDone):
                done = event
    return done


def _decide(engine: Any, conversation: Any, pending: list[ToolCall], chat: TerminalChat) -> dict[str, bool]:
    """Ask about each waiting call in turn (ya and yA answer for all of them) until none waits."""
    decided: set[str] = set()
    for call in pending:
        if call.id in decided:
            continue
        while True:
            try:
                decision = engine.decide(conversation, chat.ask_choice(call), call.id)
                break
            except ValueError as error:
                chat.console.print(Text(str(error), style="red"))
        decided.update(decision.decided)
        if decision.ready is not None:
            return decision.ready
    return {}
