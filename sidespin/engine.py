"""The long-lived parts of sidespin, opened once and shared by the web app and the CLI.

`Engine.open(settings)` starts the backend, loads the plugins (offered to the
model or held back, `sidespin.offer`), connects the MCP servers and yields an
engine; leaving the context closes them all. Each conversation plays with the
model it picked (`sidespin.backends`): any but the default starts on the first
turn that needs it, the turn reporting the load.

The transcript is the state: a turn reads the conversation's markdown file
once (so a hand edit is the new truth), builds from it the messages it sends,
the approvals remembered and the calls that wait, and writes every event back
as it arrives. In memory a conversation is only what the file does not hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from loguru import logger

from sidespin.approvals import Approvals, outside_places
from sidespin.backends import BackendPool, default_backend, display_name
from sidespin.config import Settings
from sidespin.errors import BackendError, MCPServerError, NotSaved, ToolNotOffered, TranscriptError
from sidespin.events import ErrorNotice, Event, ToolProposed, TurnDone
from sidespin.formats import image_attachments
from sidespin.rungs import Choice, choose_rung
from sidespin.limits import TurnControl
from sidespin.llm import Backend
from sidespin.offer import Plugins, plugins_for, poke_default
from sidespin.mcp.apps import APP_CONTEXT, context_prompt
from sidespin.protocol import poke_note, poke_prompt, poked
from sidespin.rally import Conversation, RallyOptions, chat_with_llm
from sidespin.search import INDEX_FILE, SearchIndex
from sidespin.tools import Tool, ToolCall, ToolRegistry, ToolResult
from sidespin.transcript import Loaded, Transcript, TranscriptRecorder, TranscriptStore

__all__ = ["Engine", "Decision", "open_mcp", "TOOLS_OFF"]

TOOLS_OFF = "tools_off"
"""The transcript note listing the tools a person switched off for the conversation."""


@dataclass
class Decision:
    """What a person's choice did: the calls it decided, and whether every call is now decided."""

    decided: dict[str, bool]
    calls: list[ToolCall]  # the calls that were waiting when the choice was made
    ready: dict[str, bool] | None  # all decisions of the answer once none waits any more
    loaded: Loaded | None = None  # the file as the choice left it: the turn that goes on records into it


class Engine:
    """Backend, tools and conversations of one running sidespin."""

    def __init__(self, settings: Settings, backend: Backend, registry: ToolRegistry, *, approval: str = "auto") -> None:
        self.settings = settings
        self.backend = backend
        self.registry = registry  # the tools the model is offered (before a conversation's switches)
        self.plugins = Plugins()  # the plugins loaded, and why the model is not offered them if it is not
        self.approval = approval
        self.approve_all = False
        self.store = TranscriptStore(settings.conversations_dir)
        self.search = SearchIndex(Path(settings.data_dir) / INDEX_FILE, self.store)  # kept current on every save
        self.mcp: Any = None
        self.rung = Choice(settings.tool_mode if settings.tool_mode != "auto" else "xml", "config")
        self.pool = BackendPool(settings, registry, backend, self.rung, display_name(backend))
        # only conversations in use stay in memory: a running turn or a page request holds them
        self.conversations: weakref.WeakValueDictionary[str, Conversation] = weakref.WeakValueDictionary()

    @classmethod
    @contextlib.asynccontextmanager
    async def open(
        cls,
        settings: Settings,
        *,
        backend: Backend | None = None,
        approval: str = "auto",
        plugins: Path | None = None,
        strict_mcp: bool = False,
        sign_ins: Any = None,
    ) -> AsyncIterator["Engine"]:
        loaded = plugins_for(settings, plugins)
        registry = ToolRegistry(loaded.offered, max_result_chars=settings.max_result_chars)
        logger.info("PLUGINS_LOADED {} tools: {}", len(registry), ", ".join(registry.names()))
        if loaded.held:
            logger.info("PLUGINS_HELD_BACK {} tools: {}", len(loaded.held), loaded.why)
        # a backend given here (`sidespin chat MODEL`, tests) is the default under its own name
        default_name = settings.models[0]["name"] if settings.models and backend is None else None
        backend = backend or default_backend(settings)
        async with contextlib.AsyncExitStack() as stack:
            stack.enter_context(registry)  # its worker threads end with the engine
            engine = cls(settings, backend, registry, approval=settings.approval or approval)
            engine.plugins = loaded
            stack.callback(engine.search.close)
            # the model loads while the servers connect: neither waits for the other
            starting = asyncio.create_task(backend.start(), name="backend-start")
            stack.push_async_callback(_stop_backend, backend, starting)
            engine.mcp = await open_mcp(stack, settings, registry, strict_mcp, sign_ins)
            if engine.mcp is not None:  # what each server holds, from its listings that may run unasked
                await engine.mcp.read_all_holdings(lambda tool: engine.outside_policy(tool, {}) is None)
            await starting
            engine.rung = choose_rung(backend, settings.tool_mode)
            logger.info("TOOL_RUNG {} ({})", engine.rung.name, engine.rung.source)
            engine.pool = BackendPool(settings, registry, backend, engine.rung, default_name or display_name(backend))
            stack.push_async_callback(engine.pool.aclose)
            if engine.rung.name == "route":  # evaluate (or restore) the route's prompt before the first message
                warming = asyncio.create_task(backend.warm(list(registry)), name="route-warm")
                stack.callback(warming.cancel)
            logger.info("ENGINE_READY backend={} model={} tools={}", backend.name, backend.model, len(registry))
            yield engine

    def options(self, keep_turns: int | None = None, reuse: list[ToolResult] | None = None) -> RallyOptions:
        s = self.settings
        return RallyOptions(
            mode=self.rung.name, max_rounds=s.max_rounds, tool_timeout=s.tool_timeout,
            system_prompt=s.system_prompt, keep_turns=keep_turns,
            turn_seconds=s.turn_seconds, turn_tokens=s.turn_tokens, reuse=list(reuse or []),
        )

    @property
    def model_name(self) -> str:
        """The default model's name, as the transcript's 🤖:[…] writes it."""
        return self.pool.default

    def per_tool_approval(self) -> dict[str, str]:
        """The approval config.json sets per tool (`"tools": {NAME: {"approval": …}}`)."""
        return {name: opts["approval"] for name, opts in self.settings.tools.items() if opts.get("approval")}

    def approve_everything(self) -> None:
        """Run every call without asking, destructive tools too (a non-interactive `sidespin ask --yes`).

        A tool configured "deny" (or "ask") in config.json keeps its setting."""
        self.approve_all = True

    def approvals(self, transcript: Transcript) -> Approvals:
        return Approvals.from_transcript(transcript, self.approval, self.per_tool_approval(),
                                         approve_all=self.approve_all)

    def outside_policy(self, tool: Tool, arguments: dict[str, Any] | None = None) -> str | None:
        """Why a call of `tool` (with `arguments`, when known) may not run for a caller outside a conversation
        (/mcp-tool-executor, /mcp), or None.

        One approval policy for every way in: a call that would wait for a person on the
        chat page, or is denied there, is refused here too; for a tool that asks, unless
        config.json says `"tools": {NAME: {"approval": "auto"}}`.
        """
        call = ToolCall(tool.name, arguments) if arguments is not None else None
        ruling = Approvals(self.approval, self.per_tool_approval(), approve_all=self.approve_all).ruling(tool, call)
        if ruling.policy == "auto":
            return None
        if ruling.policy == "deny":
            return f"the tool {tool.name!r} is not allowed ({ruling.why})"
        if call is not None and outside_places(tool, call.arguments):
            return f"the call to {tool.name!r} needs a person's approval on the chat page: {ruling.why}"
        return (f"the tool {tool.name!r} needs a person's approval on the chat page, so it is not run for outside "
                f'callers; to allow it, set "tools": {{"{tool.name}": {{"approval": "auto"}}}} in config.json')

    def trust_read_only(self, server: str, trusted: bool) -> None:
        """Whether an MCP server's `readOnlyHint` lets its tools run without asking: written in mcp.json
        (`trust_read_only`), in force at once. `MCPServerError` for an unknown server (or no mcp.json),
        `ConfigError` when mcp.json cannot be read, `NotSaved` when it cannot be written."""
        from sidespin.mcp.config import write_trust_read_only

        if self.mcp is None:
            raise MCPServerError("there are no MCP servers (no mcp.json)")
        self.mcp.connection(server)  # its MCPServerError, naming the servers
        write_trust_read_only(self.settings.mcp_config, server, trusted)
        self.mcp.trust_read_only(server, trusted)

    # ---- tools switched off, per conversation ----

    def tools_off(self, transcript: Transcript) -> list[str]:
        """The tools a person switched off for this conversation (its `tools_off` note)."""
        names = transcript.meta.get(TOOLS_OFF)
        return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []

    def registry_for(self, transcript: Transcript) -> ToolRegistry:
        """The tools this conversation's model is offered: every tool but those switched off."""
        return self.registry.without(self.tools_off(transcript))

    def poke_tool(self, transcript: Transcript | None, asked: str | None = None) -> str:
        """The tool a Poke calls in a conversation (None: a new one): `asked`, or by default get_cat_fact if
        the model is offered it, else the first tool it is offered.

        Raises ToolNotOffered for a plugin held back or when no tool is offered, ToolSwitchedOff for a tool
        switched off in the conversation, ToolNotFound for an unknown one.
        """
        offered = self.registry_for(transcript) if transcript is not None else self.registry
        if asked is None:
            chosen = poke_default(offered.names())
            if chosen is None:
                raise ToolNotOffered(None, self.why_no_tool(offered))
            return chosen
        if asked not in offered and asked in {t.name for t in self.plugins.held}:
            raise ToolNotOffered(asked, self.plugins.why)
        return offered.get(asked).name  # ToolSwitchedOff, ToolNotFound

    def why_no_tool(self, offered: ToolRegistry) -> str:
        """Why a conversation offers its model no tool, and what a person can do about it."""
        if offered.switched_off:
            return "every tool is switched off for this conversation; switch one on in the Servers panel"
        if self.plugins.why:
            return self.plugins.why
        return 'no MCP server offers a tool and the plugins are off; add a server to mcp.json or set "plugins": true'

    def switch_tool(self, conversation_id: str, name: str, on: bool) -> list[str]:
        """Switch a tool on or off for a conversation, in its transcript; the tools now off.

        Raises TranscriptError for an unknown conversation, ToolNotFound for an unknown tool.
        """
        if name not in self.registry:
            self.registry.get(name)  # its ToolNotFound, naming the known tools
        transcript = self.store.load(conversation_id)
        off = sorted({n for n in self.tools_off(transcript) if n != name} | (set() if on else {name}))
        transcript.set_meta(TOOLS_OFF, off or None)
        self.store.save(conversation_id, transcript)
        logger.info("TOOL_SWITCHED {} {} conv={}", name, "on" if on else "off", conversation_id)
        return off

    # ---- conversations ----

    def conversation(self, conversation_id: str | None = None) -> Conversation:
        """A conversation by id, or a new one when no id is given. Its file is not read here: a turn
        reads it (`events`), a page too (`opened`). TranscriptError when there is no such file."""
        known = self.conversations.get(conversation_id) if conversation_id is not None else None
        if known is not None:
            return known
        if conversation_id is None:
            conversation = Conversation(id=self.store.new())
        elif self.store.exists(conversation_id):
            conversation = Conversation(id=conversation_id)
        else:  # a link is no conversation either: it is never followed
            raise TranscriptError(f"no conversation {conversation_id!r}", path=str(self.store.path(conversation_id)))
        self.conversations[conversation.id] = conversation
        return conversation

    async def opened(self, conversation_id: str) -> tuple[Conversation, Transcript]:
        """A conversation and its file as it is now, for a page: read and parsed off the event loop (a long
        file takes seconds). The file is the truth, a hand edit included. TranscriptError when missing or broken."""
        transcript = await asyncio.to_thread(self.store.load, conversation_id)
        conversation = self.conversations.get(conversation_id)
        if conversation is None:  # on the loop, as every creator: one Conversation (one lock) per id
            closed = transcript.close_interrupted()  # no turn of ours plays it (a turn holds it in memory)
            if closed:
                self._log_interrupted(conversation_id, closed)
                with contextlib.suppress(NotSaved):  # shown closed all the same; written by the next write that can
                    self.store.save(conversation_id, transcript)
            conversation = self.conversations[conversation_id] = Conversation(id=conversation_id)
        return conversation, transcript

    @staticmethod
    def _log_interrupted(conversation_id: str, calls: list[ToolCall]) -> None:
        """Say on the console which calls were closed as interrupted (`Transcript.close_interrupted`)."""
        for call in calls:
            logger.warning("TOOL_CALL_INTERRUPTED {} id={} conv={}", call.name, call.id, conversation_id)

    def rerun(self, conversation: Conversation, call_id: str) -> dict[str, bool]:
        """A person's choice to run an interrupted call of the last answer again, as a new call.

        Records the new call, approved; returns the decisions to play the turn on with.
        Raises ValueError when `call_id` is not an interrupted call of the last answer.
        """
        recorder = TranscriptRecorder(self.store, conversation.id, self.model_name)
        if not conversation.lock.locked():  # no turn plays it: a call started and never finished was interrupted
            self._log_interrupted(conversation.id, recorder.close_interrupted())
        last = recorder.transcript.turns[-1] if recorder.transcript.turns else None
        found = recorder.transcript.find_proposal(call_id)
        interrupted = {n.get("interrupted") for n in last.notes()} if last is not None else set()
        if found is None or found[0] is not last or call_id not in interrupted:
            raise ValueError(f"{call_id!r} is not an interrupted call of the last answer; only those can be run again")
        old = found[0].segments[found[1]].call  # type: ignore[union-attr]
        again = ToolCall(old.name, dict(old.arguments))
        recorder.apply(ToolProposed(again))
        recorder.record_decision(again.id, "yo")
        logger.info("TOOL_CALL_RERUN {} id={} was={} conv={}", again.name, again.id, call_id, conversation.id)
        return {again.id: True}

    def conversation_at(self, path: Path) -> Conversation:
        """The terminal's `--transcript FILE`: resume it if it exists, else start it there."""
        path = Path(path).expanduser().resolve()
        self.store = TranscriptStore(path.parent)
        if not path.exists():
            path.write_text("", encoding="utf-8")
        return self.conversation(path.stem)

    def listing(self, showing: str = "") -> list[tuple[str, str, float]]:
        """The conversations for the sidebar: one line for the versions of one (`showing`, if it is one)."""
        return self.store.list(every_version=False, showing=showing)

    def transcript_path(self, conversation: Conversation) -> Path:
        return self.store.path(conversation.id)

    # ---- turns ----

    async def events(
        self,
        conversation: Conversation,
        user_text: str | None,
        *,
        poke_tool: str | None = None,
        poke_arguments: dict[str, Any] | None = None,
        decisions: dict[str, bool] | None = None,
        keep_turns: int | None = None,
        control: TurnControl | None = None,
        reuse: list[ToolResult] | None = None,
        note: dict[str, Any] | None = None,
        loaded: Loaded | None = None,
        on_asked: Callable[[NotSaved | None], None] | None = None,
    ) -> AsyncIterator[Event]:
        """Play one turn and record each of its events in the transcript as it arrives.

        `reuse`: results recorded in the version of the turn an edit replaced (`sidespin.versions`).
        `note`: what the user message carries besides its text (`sidespin.mcp.attach.Composed.note`).
        `loaded`: the conversation's file as the caller read it (the page's board), not to read it again.
        `on_asked`: told once the person's message is in the file (None), or the `NotSaved` that kept it out; then
        the turn ends at once with a notice, nothing sent to the model. A write that fails later in the turn is
        said once, and the turn goes on unsaved.
        """
        try:
            recorder = TranscriptRecorder(self.store, conversation.id, self.model_name, loaded=loaded)
        except TranscriptError as error:
            logger.error("TRANSCRIPT_UNREADABLE conv={} {}", conversation.id, error)
            yield ErrorNotice(f"{error} — fix or move the file; it was not changed")
            yield TurnDone(reason="error")
            return
        try:  # the turns of a conversation never interleave: a call started and never finished was interrupted
            self._log_interrupted(conversation.id, recorder.close_interrupted())
        except NotSaved as error:
            logger.warning("TRANSCRIPT_INTERRUPTED_NOT_SAVED conv={} {}", conversation.id, error.reason)
        transcript = recorder.transcript
        recorder.model_name = model = self.pool.choose(transcript.meta.get("model"))
        history = transcript.to_messages(summarize_after=self.settings.summarize_after or None)
        waiting = transcript.open_calls() if user_text is None and not poke_tool else []
        approvals = self.approvals(transcript)
        registry = self.registry_for(transcript)
        if poke_tool:
            # only the asked-for tool: a short prompt is a fast prefill (the grammar admits no other tool)
            user_text = poke_prompt([registry.get(poke_tool)], tool_name=poke_tool, arguments=poke_arguments)
            note = {**(note or {}), **poke_note(poke_tool, poke_arguments)}  # the tool, beside its prompt
        elif user_text is not None and (again := poked(note, user_text)) in registry.names():
            poke_tool = again  # a Poke played again (a regenerate) calls its tool again
            note = {**poke_note(again), **(note or {})}  # a Poke written before its tool was noted gets it now
        if user_text is not None:
            try:
                recorder.user(user_text, note)
            except NotSaved as error:
                logger.error("MESSAGE_NOT_SAVED conv={} {}", conversation.id, error.reason)
                if on_asked is not None:
                    on_asked(error)
                yield ErrorNotice(f"your message was not saved, so nothing was sent to the model: {error}")
                yield TurnDone(reason="error")
                return
            if on_asked is not None:
                on_asked(None)
            if self.mcp is not None:  # what it carried is sent fresh, and followed from now on
                self.mcp.subscriptions.attached(conversation.id, (note or {}).get("attached") or [])
        try:
            async for event in self._load(model, recorder, control):
                yield event
            if not self.pool.ready(model):
                return
            async for event in chat_with_llm(
                conversation,
                user_text,
                backend=self.pool.backend(model),
                registry=registry,
                history=history,
                options=replace(self.options(keep_turns, reuse), mode=self.pool.rung(model).name,
                                system_prompt=context_prompt(self.settings.system_prompt,
                                                             transcript.meta.get(APP_CONTEXT))),
                policy=approvals.ruling,
                decisions=decisions,
                waiting=waiting,
                force_tool=poke_tool,
                control=control,
                images=image_attachments((note or {}).get("attachments")),
            ):
                try:
                    recorder.apply(event)
                except (TranscriptError, NotSaved) as error:  # the file broke under us: keep playing, say so once
                    logger.error("TRANSCRIPT_WRITE_REFUSED conv={} {}", conversation.id, error)
                    yield ErrorNotice(f"{error} — this turn is not being saved")
                    recorder = _NullRecorder()
                yield event
        finally:
            with contextlib.suppress(TranscriptError, NotSaved):
                recorder.flush()

    async def _load(self, model: str, recorder: TranscriptRecorder, control: TurnControl | None) -> AsyncIterator[Event]:
        """Start the conversation's model if it is not started, reporting the load; a failure or a Stop ends the turn."""
        ending: list[Event] = []
        try:
            async for loading in self.pool.load(model, stop=lambda: control is not None and control.reason is not None):
                recorder.apply(loading)
                yield loading
        except BackendError as error:
            logger.error("MODEL_LOAD_FAILED {} {}", model, error)
            ending = [ErrorNotice(f"the model {model!r} could not start: {error}"), TurnDone(reason="error")]
        if not ending and not self.pool.ready(model):  # stopped while it loads: it goes on loading for the next turn
            ending = [ErrorNotice(f"stopped by you while {model!r} was loading; it goes on loading for the next "
                                  "message"), TurnDone(reason="stopped")]
        for event in ending:
            with contextlib.suppress(NotSaved):  # the turn ends here: it says why, saved or not
                recorder.apply(event)
            yield event

    def decide(self, conversation: Conversation, choice: str, call_id: str | None) -> Decision:
        """Record a person's choice (ya, yA, yo, yO, n) after the ❓: lines it decides.

        Raises ValueError for an unknown choice or a call that is not waiting.
        """
        recorder = TranscriptRecorder(self.store, conversation.id, self.model_name)
        waiting = recorder.transcript.pending_calls()
        if call_id and call_id not in {call.id for call in waiting}:
            listed = ", ".join(call.id for call in waiting) or "none"
            raise ValueError(f"the call {call_id!r} does not wait for a choice (waiting: {listed})")
        if not waiting:
            raise ValueError("no tool call waits for a choice in this conversation")
        approvals = self.approvals(recorder.transcript)
        decided = approvals.apply_choice(choice, waiting, target=call_id)
        for call in waiting:  # a tool just remembered (yO, yA) needs no more asking in this answer
            if call.id not in decided and call.name in approvals.remembered:
                decided[call.id] = True
        for decided_id in decided:
            recorder.record_decision(decided_id, choice)
        logger.info("TOOL_CALL_DECIDED conv={} choice={} calls={}", conversation.id, choice, ",".join(decided))
        loaded = Loaded(recorder.transcript, self.store.stamp(conversation.id))
        if recorder.transcript.pending_calls():
            return Decision(decided, waiting, None, loaded)
        return Decision(decided, waiting, recorder.transcript.decided_unrun(), loaded)

    def health(self) -> dict[str, Any]:
        return {
            "status": "ok",
            **self.backend.describe(),
            "models": {name: "ready" if self.pool.ready(name) else "not started" for name in self.pool.names()},
            **self.rung.describe(),
            "tools": len(self.registry),
            "plugins": str(self.plugins.folder) if self.plugins.folder else False,
            "plugins_held_back": [tool.name for tool in self.plugins.held],
            "mcp_servers": self.mcp.state() if self.mcp is not None else {},
        }


class _NullRecorder:
    """Stands in for a recorder whose file can no longer be written."""

    def apply(self, event: Event) -> None:
        pass

    def flush(self) -> None:
        pass


async def _stop_backend(backend: Backend, starting: asyncio.Task[None]) -> None:
    """Close the backend, first stopping its start if that is still under way (a server failed to connect)."""
    starting.cancel()
    await asyncio.gather(starting, return_exceptions=True)
    await backend.aclose()


async def open_mcp(
    stack: contextlib.AsyncExitStack, settings: Settings, registry: ToolRegistry, strict: bool, sign_ins: Any = None
) -> Any:
    """Connect the servers of mcp.json, if there is one, and add their tools to the registry.

    OAuth tokens live in `<data_dir>/oauth`; a sign-in comes back to `/oauth/callback` on our port
    (`sign_ins`: the terminal's own, with a listener of its own)."""
    path = Path(settings.mcp_config)
    if not path.exists():
        return None
    from sidespin.mcp import MCPManager, load_mcp_config
    from sidespin.mcp.apps import AppShelf
    from sidespin.mcp.auth import SignIns, redirect_uri

    configs = load_mcp_config(path)
    sign_ins = sign_ins or SignIns(redirect_uri(settings.port))
    manager = await stack.enter_async_context(
        MCPManager(configs, strict=strict, token_dir=Path(settings.data_dir) / "oauth", sign_ins=sign_ins,
                   apps=AppShelf(Path(settings.data_dir) / "apps"),
                   max_result_chars=settings.max_result_chars, private=[Path(settings.data_dir) / INDEX_FILE])
    )
    manager.register_into(registry)
    return manager

