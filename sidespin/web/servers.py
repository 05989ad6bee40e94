"""The Servers panel: each MCP server's status, its tools with a switch each, and what the tool list costs;
and what an empty conversation's page says about the tools the model can use (`ToolOffer`).

A collapsible section of the sidebar; its closed line counts the servers ready, or says none is
configured and where to add one. Per configured server: a coloured dot and its status
(starting, ready, failed, restarting, needs sign-in), transport, tool count and protocol; for a
failed server its reason and stderr tail; **Restart**; **Sign in** for one that needs it. Servers
mcp.json lists as disabled are shown greyed. The plugins are a group of their own ("plugins"),
so their tools can be switched off too; while they are held back (`sidespin.offer`) the group
says why and how to turn them on.

A switch applies to the open conversation and is kept in its transcript (`tools_off` note,
`Engine.switch_tool`): a tool switched off is not offered to the model at all, and a call to it
anyway is refused.

A server's card also says what was left out of its tools (past `MAX_SERVER_TOOLS`, names MCP does not
allow, names that could be taken for another source's tool and are offered as `server__name`), marks each
tool that runs without asking because its server says it only reads (`readOnlyHint`), and has a switch
to stop trusting those hints (`Engine.trust_read_only`, kept in mcp.json as `"trust_read_only": false`).

The panel's first line says how many tools the model is offered and how many tokens their list costs
it in the mode it plays
(the XML teaching prompt, the route's prompt, or the native JSON schemas), counted by the model's own
tokenizer where the backend has one, else estimated (chars / 4, "≈").

Routes (`ar`, under /servers):

    GET  /servers/panel?cid=…   the panel's body (what the live stream sends)
    GET  /servers/live?cid=…    SSE: the body again whenever a server's status changes; a heartbeat
    POST /servers/restart       server, cid: restart a server (a failed one too); the new body
    POST /servers/tool          cid, tool, on ("1" or nothing): switch a tool for the conversation; the new body
    POST /servers/trust         server, cid, on ("1" or nothing): trust the server's read-only hints; the new body

Sign in posts to `/oauth/{server}/sign-in` (`sidespin.web.oauth`).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fasthtml.common import (
    APIRouter, Button, Details, Div, Input, Label, Li, P, Pre, Span, Summary, Ul, sse_message,
)
from loguru import logger
from starlette.requests import Request

from sidespin.errors import ConfigError, MCPServerError, ToolNotFound, TranscriptError
from sidespin.offer import PLUGINS, Plugins, by_source, source_name
from sidespin.tooluse import SHORTLIST
from sidespin.rungs import rung_named
from sidespin.tools import Tool, plugins_dir
from sidespin.web.composer import ChangedNotice
from sidespin.web.forms import refusal, text_fields
from sidespin.web.oauth import oauth_sign_in
from sidespin.web.page import PokeTool
from sidespin.web.sse import EventStream

if TYPE_CHECKING:
    from sidespin.engine import Engine
    from sidespin.transcript import Transcript

__all__ = ["ServersPanel", "ServersBody", "ToolOffer", "tool_list_cost", "ar"]

HEARTBEAT = 15.0  # seconds between two keep-alive comments of the live stream
MAX_ERROR_CHARS = 4000  # of a failed server's reason and stderr tail, as shown
COUNT_TIMEOUT = 5.0  # seconds the model's tokenizer gets before the estimate is shown instead

ar = APIRouter(prefix="/servers")


# ---------------------------------------------------------------- the cost of the tool list

@dataclass
class Cost:
    """Tokens the tool list costs the model: `counted` by its tokenizer, else estimated."""

    tokens: int
    counted: bool
    mode: str
    tools: int = 0  # how many tools the conversation offers

    def line(self) -> str:
        """How many tools the model is offered, and what their list costs it."""
        if not self.tools:
            return "no tools offered to the model"
        where = {"native": "native tool schemas", "route": "route prompt", "xml": "tool prompt"}.get(self.mode, self.mode)
        if self.mode == "route" and self.tools > SHORTLIST:
            where = f"route prompt, at most: one server's table of the {self.tools} tools, for each message"
        figure = f"{self.tokens:,}" if self.counted else f"≈ {self.tokens:,}"
        return f"{_tools(self.tools)} offered · tool list: {figure} tokens ({where})"


def tool_section(tools: list[Tool], mode: str) -> str:
    """The part of what the model is sent that lists the tools, as the mode sends it."""
    return rung_named(mode).tool_section(tools)


async def tool_list_cost(engine: "Engine", transcript: "Transcript") -> Cost:
    """What the conversation's tool list costs its model now (tools switched off left out)."""
    model = engine.pool.choose(transcript.meta.get("model"))
    ready = engine.pool.ready(model)
    mode = engine.pool.rung(model).name if ready else engine.rung.name
    tools = list(engine.registry_for(transcript))
    text = await asyncio.to_thread(tool_section, tools, mode)  # a long tool list is written off the event loop
    if not text:
        return Cost(0, True, mode, len(tools))
    counted: int | None = None
    if ready:
        try:
            counted = await asyncio.wait_for(engine.pool.backend(model).count_tokens(text), COUNT_TIMEOUT)
        except TimeoutError:
            logger.warning("TOOL_COST_UNCOUNTED {} no answer within {:g} s", model, COUNT_TIMEOUT)
    if counted is None:
        return Cost(max(1, len(text) // 4), False, mode, len(tools))
    return Cost(counted, True, mode, len(tools))


# ---------------------------------------------------------------- components

def ToolSwitch(tool: Tool, cid: str, on: bool, unasked: bool = False):
    """A tool's switch for the open conversation; `unasked`: it runs without asking because its server says it
    only reads."""
    box = Input(type="checkbox", name="on", value="1", checked=on, hx_post=switch_tool.to(),
                hx_vals=json.dumps({"cid": cid, "tool": tool.name}), hx_trigger="change",
                hx_target="#servers-body", hx_swap="innerHTML", aria_label=f"use {tool.name} in this conversation")
    badge = (Span("reads only", cls="read-only", title="runs without asking: its server says it only reads"),) \
        if unasked else ()
    return Li(Label(box, Span(tool.name, cls="tool-name"), *badge, title=tool.description[:300]),
              cls="tool" + ("" if on else " off"), data_tool=tool.name, data_on="true" if on else "false",
              data_unasked="true" if unasked else "false")


def TrustSwitch(name: str, state: dict[str, Any], unasked: int, claimed: int, cid: str):
    """Whether the server's read-only hints let its tools run without asking, and how many do."""
    trusted = bool(state.get("trust_read_only", True))
    box = Input(type="checkbox", name="on", value="1", checked=trusted, hx_post=trust.to(),
                hx_vals=json.dumps({"cid": cid, "server": name}), hx_trigger="change", hx_target="#servers-body",
                hx_swap="innerHTML", aria_label=f"trust {name}'s read-only hints")
    if trusted:
        said = (f"{unasked} tool{'' if unasked == 1 else 's'} run without asking: the server says "
                f"{'it reads' if unasked == 1 else 'they read'} only")
    else:
        said = f"not trusted: its {claimed} tools said to read only ask like the others"
    return Label(box, Span(f"Trust its read-only hints · {said}"), cls="trust-read-only",
                 title="MCP calls a server's hints untrusted: switch this off to be asked before every tool of it")


def _tools(count: int) -> str:
    return f"{count} tool" + ("" if count == 1 else "s")


def _tools_of(engine: "Engine", source: str) -> list[Tool]:
    return [t for t in engine.registry if t.source == source]


def ServerCard(name: str, state: dict[str, Any], tools: list[Tool], off: set[str], cid: str,
               unasked: set[str] | None = None, claimed: int = 0):
    """One configured server: its status with a dot, what it speaks, what was left out of its tools, why it failed,
    Restart, Sign in, whether its read-only hints are trusted, its tools (`unasked`: those that run without asking
    because it says they only read; `claimed`: how many it says only read)."""
    unasked = unasked or set()
    status = state["status"]
    facts = [state["transport"], _tools(len(tools))]
    if state.get("protocol"):
        facts.append(f"protocol {state['protocol']}")
    parts: list[Any] = [
        Div(Span(cls="dot"), Span(name, cls="server-name"), Span(status, cls="server-status"), cls="server-head"),
        P(" · ".join(facts), cls="server-facts"),
        *[P(f"⚠ {notice}", cls="server-notice") for notice in state.get("notices") or []],
    ]
    if status == "failed" and state.get("error"):
        reason, _, tail = str(state["error"])[:MAX_ERROR_CHARS].partition("\nstderr:\n")
        parts.append(P(reason, cls="server-error"))
        if tail:
            parts.append(Pre(tail, cls="stderr", title="the end of what the server wrote to stderr"))
    actions: list[Any] = []
    if status == "needs sign-in":
        # a POST (it may restart the server), answered with HX-Redirect to the authorization server
        actions.append(Button("Sign in", cls="sign-in", hx_post=oauth_sign_in.to(server=quote(name, safe='')),
                              hx_swap="none", title=f"sign in to {name} at its authorization server"))
    actions.append(Button("Restart", cls="restart", hx_post=restart.to(), hx_vals=json.dumps({"server": name, "cid": cid}),
                          hx_target="#servers-body", hx_swap="innerHTML", disabled=status in ("starting", "restarting"),
                          title=f"stop {name} and start it again"))
    parts.append(Div(*actions, Span(cls="action-error", role="alert"), cls="server-actions"))
    if claimed or not state.get("trust_read_only", True):
        parts.append(TrustSwitch(name, state, len(unasked), claimed, cid))
    if tools:
        parts.append(Ul(*[ToolSwitch(t, cid, t.name not in off, t.name in unasked) for t in tools],
                        cls="tool-switches"))
    return Div(*parts, cls="server", data_server=name, data_status=status,
               data_trust="true" if state.get("trust_read_only", True) else "false")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


def PluginsCard(plugins: Plugins, off: set[str], cid: str):
    """The plugins, as a group whose tools switch like a server's; the demos held back greyed, with why and how
    to turn them on; or a line saying config.json switches them off."""
    body: list[Any] = []
    if plugins.offered:
        body.append(Ul(*[ToolSwitch(t, cid, t.name not in off) for t in plugins.offered], cls="tool-switches"))
    if plugins.held:
        body += [P(", ".join(t.name for t in plugins.held), cls="server-facts held"),
                 P(_sentence(plugins.why), cls="server-facts")]
    if plugins.folder is None:
        body.append(P('"plugins": false in config.json', cls="server-facts"))
    status = "off" if plugins.folder is None else "not offered" if not plugins.offered else "built in"
    return Div(
        Div(Span(cls="dot"), Span(PLUGINS, cls="server-name"), Span(status, cls="server-status"), cls="server-head"),
        *body, cls="server plugins", data_server=PLUGINS, data_status="ready" if status == "built in" else status,
    )


def DisabledCard(name: str, transport: str):
    return Div(Div(Span(cls="dot"), Span(name, cls="server-name"), Span("disabled", cls="server-status"),
                   cls="server-head"),
               P(f"{transport} · \"disabled\": true in mcp.json", cls="server-facts"),
               cls="server disabled", data_server=name, data_status="disabled")


async def ServersBody(engine: "Engine", cid: str, transcript: "Transcript"):
    """Everything inside the panel: the cost line, then a card per server and the plugins group."""
    off = set(engine.tools_off(transcript))
    cost = await tool_list_cost(engine, transcript)
    cards: list[Any] = [P(cost.line(), cls="tools-cost", id="tools-cost", data_tokens=str(cost.tokens),
                          data_counted="true" if cost.counted else "false")]
    manager = engine.mcp
    if manager is None:
        cards.append(P("No MCP servers: there is no mcp.json (see mcp.example.json).", cls="no-servers"))
    else:
        approvals = engine.approvals(transcript)
        for name, state in manager.state().items():
            tools = _tools_of(engine, f"mcp:{name}")
            claimed = sum(1 for listed in manager.tools(name)
                          if listed.annotations and listed.annotations.read_only_hint)
            unasked = {t.name for t in tools if t.read_only and approvals.default != "deny"
                       and t.name not in approvals.per_tool}
            cards.append(ServerCard(name, state, tools, off, cid, unasked, claimed))
        cards.extend(DisabledCard(config.name, config.transport) for config in manager.disabled)
    cards.append(PluginsCard(engine.plugins, off, cid))
    return cards


def _summary(engine: "Engine") -> str:
    """The panel's closed line: how many servers are ready, or that none is configured and where to add one."""
    states = engine.mcp.state() if engine.mcp is not None else {}
    if not states:
        disabled = len(engine.mcp.disabled) if engine.mcp is not None else 0
        return (f"Servers: none on · {disabled} disabled in mcp.json" if disabled
                else "Servers: none configured · add one in mcp.json")
    ready = sum(1 for s in states.values() if s["status"] == "ready")
    failed = sum(1 for s in states.values() if s["status"] == "failed")
    return f"Servers {ready}/{len(states)} ready" + (f" · {failed} failed" if failed else "")


def _source_kind(engine: "Engine", name: str) -> str:
    if name != PLUGINS:
        return "tools"
    return "built in" if engine.plugins.folder == plugins_dir() else f"from {engine.plugins.folder}"


def _offer_rows(engine: "Engine", offered: list[Tool]) -> list[Any]:
    """One line per source of tools: each configured server (its count, or its status until it is ready), then
    the plugins."""
    counts = by_source(t.source for t in offered)
    rows: list[Any] = []
    states = engine.mcp.state() if engine.mcp is not None else {}
    for name, state in [*states.items(), *[(name, None) for name in counts if name not in states]]:
        count = counts.get(name, 0)
        if state is None:
            said = f"{_source_kind(engine, name)} · {_tools(count)}"
        else:
            ready = state["status"] == "ready"
            said = "MCP server · " + (_tools(count) if ready else f"{state['status']} (see Servers)")
        rows.append(Li(Span(name, cls="source-name"), f" · {said}", data_source=name, data_tools=str(count),
                       title=", ".join(t.name for t in offered if source_name(t.source) == name)))
    return rows


def ToolOffer(engine: "Engine", transcript: "Transcript", **kwargs: Any):
    """What an empty conversation's page says: which tools the model can use, by where they come from (the
    plugins, each server, with counts), the plugins held back and why, and how to add a server."""
    view = engine.registry_for(transcript)
    offered = list(view)
    if offered:
        head = f"The model can use {_tools(len(offered))} in this conversation:"
    else:
        head = f"The model is offered no tools: {engine.why_no_tool(view)}."
    rows = _offer_rows(engine, offered)
    notes: list[str] = []
    switched = [name for name in view.switched_off if name in engine.registry]
    if switched:
        notes.append(f"{_tools(len(switched))} switched off for this conversation (Servers panel).")
    if engine.plugins.why and offered:
        notes.append(_sentence(engine.plugins.why))
    if engine.mcp is None or not engine.mcp.state():
        notes.append("Add your own tools: list MCP servers in mcp.json (see mcp.example.json).")
    if offered:
        notes.append("Ask something, or press 🏓 Poke to have the model call a tool.")
    return Div(P(head, cls="offer-head"), Ul(*rows, cls="offer-sources") if rows else "",
               *[P(note, cls="offer-note") for note in notes],
               id="tool-offer", cls="tool-offer", data_offered=str(len(offered)), **kwargs)


def Following(engine: "Engine", transcript: "Transcript") -> list[Any]:
    """What follows the tools a conversation offers, out of band: the Poke picker, and the empty page's
    summary while the conversation has no message."""
    parts: list[Any] = [PokeTool(engine.registry_for(transcript).names(), hx_swap_oob="true")]
    if transcript.filled_turns == 0:
        parts.append(ToolOffer(engine, transcript, hx_swap_oob="true"))
    return parts


async def ServersPanel(engine: "Engine", cid: str, transcript: "Transcript"):
    """The collapsible panel; open by itself when a server failed, so its reason is seen."""
    failed = engine.mcp is not None and bool(engine.mcp.failures)
    return Details(
        Summary(_summary(engine), cls="servers-summary"),
        Div(*await ServersBody(engine, cid, transcript), id="servers-body", hx_ext="sse",
            sse_connect=live.to(cid=cid), sse_swap="servers", hx_swap="innerHTML"),
        id="servers", cls="servers-panel", open=failed,
    )


# ---------------------------------------------------------------- routes

def _load(engine: "Engine", cid: str) -> "Transcript":
    return engine.store.load(cid)


@ar("/panel", methods=["get"])
async def panel(request: Request, cid: str = ""):
    engine = request.app.state.engine
    text_fields(cid=cid)
    try:
        transcript = _load(engine, cid)
    except TranscriptError as error:
        return refusal(str(error), 404)
    return tuple(await ServersBody(engine, cid, transcript))


@ar("/live", methods=["get"])
async def live(request: Request, cid: str = ""):
    """The panel's body whenever a server's status changes (and once on connecting); a heartbeat between."""
    engine = request.app.state.engine
    text_fields(cid=cid)
    manager = engine.mcp

    async def updates():
        seen = manager.version if manager is not None else 0
        first = True
        while not await request.is_disconnected():
            try:
                transcript = _load(engine, cid)
            except TranscriptError:
                return  # the conversation went (deleted): nothing to draw for it
            parts = await ServersBody(engine, cid, transcript)
            if not first:  # the tools may have changed: the Poke picker and the empty page's summary follow
                parts.extend(Following(engine, transcript))
            if manager is not None:  # attached resources that changed on their server: the line above the composer
                parts.append(ChangedNotice(manager.subscriptions.changed(cid), hx_swap_oob="true"))
            yield sse_message(Div(*parts), event="servers")
            first = False
            while True:
                if manager is None:
                    await asyncio.sleep(HEARTBEAT)
                else:
                    try:
                        seen = await asyncio.wait_for(manager.wait_for_change(seen), HEARTBEAT)
                        break
                    except TimeoutError:
                        pass
                if await request.is_disconnected():
                    return
                yield ": heartbeat\n\n"

    return EventStream(updates())


@ar("/restart", methods=["post"])
async def restart(request: Request, server: str = "", cid: str = ""):
    """Restart a server by a person's choice; the panel's new body once it is done (or failed again)."""
    engine = request.app.state.engine
    text_fields(server=server, cid=cid)
    if engine.mcp is None:
        return refusal("there are no MCP servers (no mcp.json)", 404)
    try:
        status = await engine.mcp.restart_server(server)
        transcript = _load(engine, cid)
    except MCPServerError as error:
        return refusal(str(error), 404)
    except TranscriptError as error:
        return refusal(str(error), 404)
    logger.info("MCP_SERVER_RESTARTED_BY_PERSON {} status={}", server, status)
    return (*await ServersBody(engine, cid, transcript), *Following(engine, transcript))


@ar("/trust", methods=["post"])
async def trust(request: Request, server: str = "", cid: str = "", on: str = ""):
    """Trust a server's read-only hints (`on` = "1") or not, kept in mcp.json; the panel's new body."""
    engine = request.app.state.engine
    text_fields(server=server, cid=cid, on=on)
    try:
        engine.trust_read_only(server, bool(on))
        transcript = _load(engine, cid)
    except MCPServerError as error:
        return refusal(str(error), 404)
    except ConfigError as error:
        return refusal(str(error), 409)
    except TranscriptError as error:
        return refusal(str(error), 404)
    logger.info("MCP_READ_ONLY_TRUST_BY_PERSON {} {}", server, "on" if on else "off")
    return tuple(await ServersBody(engine, cid, transcript))


@ar("/tool", methods=["post"])
async def switch_tool(request: Request, cid: str = "", tool: str = "", on: str = ""):
    """Switch a tool on (`on` = "1") or off for the conversation, in its transcript; the panel's new body."""
    engine = request.app.state.engine
    text_fields(cid=cid, tool=tool, on=on)
    try:
        engine.switch_tool(cid, tool, bool(on))
        transcript = _load(engine, cid)
    except ToolNotFound as error:
        return refusal(str(error), 404)
    except TranscriptError as error:
        return refusal(str(error), 404)
    return (*await ServersBody(engine, cid, transcript), *Following(engine, transcript))
