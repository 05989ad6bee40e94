"""One terminal session: start the engine, then read a line, play its turn, ask what waits, again.

`bye`, `quit`, Ctrl-C or Ctrl-D end the program cleanly with exit status 0. The prompt is read
in a thread (`keyboard`) so that sign-ins complete (and servers connect) while it waits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from sidespin.config import Settings, load_settings
from sidespin.errors import AttachmentRefused, MCPServerError, SidespinError
from sidespin.events import QuestionAsked, TurnDone
from sidespin.logs import setup_logging
from sidespin.terminal.chat import TerminalChat
from sidespin.terminal.keyboard import KEYBOARD
from sidespin.terminal.line import read_line
from sidespin.terminal.sign_in import sign_in_listener
from sidespin.tools import ToolCall

if TYPE_CHECKING:
    from sidespin.llm.base import Backend

__all__ = ["PROMPT", "run_chat"]

PROMPT = "prompt -> "
EXIT_WORDS = {"bye", "quit", "exit"}


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if getattr(args, "mcp_config", None):
        overrides["mcp_config"] = Path(args.mcp_config)
    return load_settings(getattr(args, "config", None), **overrides)


def run_chat(args: argparse.Namespace, backend: Backend | None = None) -> int:
    """The whole terminal session; start-up failures are fatal and clear, the rest is reported.
    `backend`: the model to talk to (None: the one `args.model` or the settings name)."""
    console = Console(highlight=False)
    settings = _settings(args)
    setup_logging(settings.logs_dir, console=bool(getattr(args, "verbose", False)))
    with asyncio.Runner() as runner:
        stack = contextlib.AsyncExitStack()
        try:
            # llama.cpp reports no load progress of its own: an indeterminate bar and the elapsed time show it goes on
            with _load_line(console, "loading the model and the tools (the first start also picks the tool rung)"):
                started = time.monotonic()
                engine = runner.run(_open_engine(stack, args, settings, backend))
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


async def _open_engine(stack: contextlib.AsyncExitStack, args: argparse.Namespace, settings: Settings,
                       backend: Backend | None = None):
    from sidespin.engine import Engine
    from sidespin.llm import backend_from_spec

    if backend is None and args.model:
        backend = backend_from_spec(args.model, settings)
    approval = "ask" if args.approve else "auto"
    sign_ins = await sign_in_listener(stack, settings, Console(highlight=False))
    engine = await stack.enter_async_context(
        Engine.open(settings, backend=backend, approval=approval, strict_mcp=True, sign_ins=sign_ins)
    )
    return engine


def _loop(runner: asyncio.Runner, engine: Any, args: argparse.Namespace, console: Console) -> None:
    chat = TerminalChat(console)
    conversation = engine.conversation_at(Path(args.transcript)) if args.transcript else engine.conversation()
    chat.page = _page_link(engine.settings, conversation.id)
    tools = ", ".join(engine.registry.names()) or "none"
    console.print(Text(f"sidespin · {engine.model_name} · tools: {tools}", style="dim"))
    if engine.plugins.why:
        console.print(Text(engine.plugins.why, style="dim"))
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


def _page_link(settings: Settings, cid: str) -> str:
    """The conversation's page on the web server these settings describe (where its MCP Apps are drawn)."""
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://{host}:{settings.port}/c/{cid}"  # the page's route, sidespin.web.links.CHAT_PATH


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
