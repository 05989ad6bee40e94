"""The rally's events drawn on a terminal, and a server's question or an approval asked there.

Replies stream; a tool call interrupts the stream with a panel (time, tool, arguments, result
or error, duration), then the stream resumes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from datetime import datetime

from rich.console import Console
from rich.panel import Panel
from rich.status import Status
from rich.table import Table
from rich.text import Text

from sidespin.approvals import CHOICES, MEANINGS
from sidespin.errors import BadAnswer, QuestionError
from sidespin.events import (
    ApprovalNeeded,
    ErrorNotice,
    Event,
    MalformedCall,
    ModelLoading,
    QuestionAsked,
    TextDelta,
    Thought,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnDone,
    Usage,
)
from sidespin.questions import Field, QuestionDesk, fields, summary
from sidespin.terminal.keyboard import KEYBOARD
from sidespin.tools import ToolCall, ToolResult

__all__ = ["TerminalChat"]

_ACTION_KEYS = {"a": "accept", "accept": "accept", "d": "decline", "decline": "decline", "c": "cancel", "cancel": "cancel"}


class TerminalChat:
    """Draws rally events on a terminal; holds what persists between events of one turn."""

    def __init__(self, console: Console, line: Callable[[str], Awaitable[str]] = KEYBOARD.line) -> None:
        self.console = console
        self.line = line  # how a question's answers are read (a test gives scripted lines)
        self.started: dict[str, datetime] = {}
        self.mid_line = False
        self.loading: Status | None = None  # the progress line of the model this turn waits for
        self.calls: dict[str, str] = {}  # the names of the calls running, by id
        self.news: Status | None = None  # the line of a running call's latest news (progress, its task's status)
        self.usage: Usage | None = None  # the turn's tokens, every round added up
        self.page: str | None = None  # the conversation's page on the web server, where its MCP Apps are drawn
        self.why: dict[str, str] = {}  # why a waiting call asks, by call id (`ApprovalNeeded.why`)

    def draw(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.console.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)
            self.mid_line = not event.text.endswith("\n")
        elif isinstance(event, Thought) and event.text.strip():
            self.break_line()
            self.console.print(Text("💭 " + event.text.strip(), style="dim italic"))
        elif isinstance(event, ToolStarted):
            self.started[event.call.id] = datetime.now()
            self.calls[event.call.id] = event.call.name
        elif isinstance(event, ToolProgress):
            self.show_news(event)
        elif isinstance(event, ToolFinished):
            self.break_line()
            self.calls.pop(event.result.call.id, None)
            self.show_news(None)
            self.console.print(self.tool_panel(event.result))
        elif isinstance(event, MalformedCall):
            self.break_line()
            self.console.print(Panel(Text(event.raw), title=f"malformed tool call: {event.reason}", border_style="red"))
        elif isinstance(event, ErrorNotice):
            self.break_line()
            self.console.print(Text(f"⚠ {event.message}", style="bold red"))
        elif isinstance(event, ApprovalNeeded):
            self.why[event.call.id] = event.why
        elif isinstance(event, ModelLoading):
            self.show_loading(event)
        elif isinstance(event, Usage):
            self.usage = self.usage.plus(event) if self.usage is not None else event
        elif isinstance(event, TurnDone):
            self.break_line()
            self.show_loading(None)
            self.show_news(None)
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

    def show_news(self, event: ToolProgress | None) -> None:
        """One line, redrawn in place, with a running call's latest news (`⏳ slow_compute · working · 3 of 10`);
        None takes it away."""
        if event is None:
            if self.news is not None:
                self.news.stop()
                self.news = None
            return
        if event.call_id not in self.calls:
            return  # news of a call already over
        line = f"⏳ {self.calls.get(event.call_id, 'a tool')} · {event.line()}"
        if self.news is None:
            self.break_line()
            self.news = self.console.status(Text(line), spinner="dots")
            self.news.start()
        else:
            self.news.update(Text(line))

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
        app = next((item for item in result.attachments if item.get("type") == "app"), None)
        if app is not None:  # an app is drawn on the page only: say so, and where
            where = f"open {self.page} (with ./run serving)" if self.page else "open this conversation on the page"
            table.add_row("app", Text(f"this result has an app ({app.get('uri')}): {where} to use it", style="magenta"))
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
        shown = Text(json.dumps(call.arguments, ensure_ascii=False))
        why = self.why.pop(call.id, "")
        if why:
            shown.append(f"\nasked because {why}", style="yellow")
        self.console.print(Panel(shown, title=f"❓ {call.name}", border_style="yellow", expand=False))
        while True:
            answer = KEYBOARD.line_now(f">> Please choose ({'/'.join(CHOICES)}): ").strip()
            if answer in CHOICES:
                return answer
            self.console.print("\n".join(["choose one of:", *(f"  {key:<3} {meaning}" for key, meaning in MEANINGS.items())]),
                               markup=False)


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


def _shorten(text: str, limit: int = 1200) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"
