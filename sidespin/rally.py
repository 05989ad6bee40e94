"""The rally: `chat_with_llm` streams a model's answer, intercepts its tool calls and plays them.

One turn runs in rounds. Each round streams the model's answer through the
`Interceptor`: visible text goes out at once as `TextDelta`, a complete
`<mcp-request>` block (or a native tool call) is dispatched at once as an
asyncio task while the stream goes on. When the stream ends, the results go
back as tool messages and the model is called again, until it answers
without a call, a server-side formatter answers for it, a call waits for a
person's approval, or the round limit is reached.

A turn plays on its `history`: the messages so far (OpenAI-shaped, without the
system prompt), which the caller builds from the transcript (`Transcript.to_messages`),
the only state of a conversation; the turn appends to that list what it says as it
plays, and nothing else holds it. Which calls wait for a person is the caller's to
say (`waiting`, read off the transcript's record): a turn that ends waiting says
which (`TurnDone.pending`).

Beside it: `answer` reads each piece of a round's answer into events,
`limits` ends a turn at its clock, its token budget or a person's Stop, and
`history` keeps a long conversation's recent turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from loguru import logger

from sidespin.answer import TAGS, AnswerReader, Round
from sidespin.approvals import Ruling
from sidespin.config import ToolMode
from sidespin.errors import BackendError, MalformedToolCall
from sidespin.events import (
    ApprovalNeeded,
    ErrorNotice,
    Event,
    MalformedCall,
    TextDelta,
    ToolFinished,
    ToolProposed,
    ToolStarted,
    TurnDone,
    Usage,
)
from sidespin.formats import ATTACHMENTS, call_to_openai, tool_message
from sidespin.history import put_result, recent
from sidespin.honesty import Facts, unfounded
from sidespin.intercept import Interceptor
from sidespin.limits import TurnControl, TurnCut
from sidespin.llm.base import Backend, Delta
from sidespin.llm.llama import counting
from sidespin.protocol import holds_call_syntax, poke_prompt
from sidespin.questions import CallScope, current_call
from sidespin.rungs import choose_rung
from sidespin.rungs import Ask, Request, Rung, rung_named
from sidespin.tools import DEFAULT_TIMEOUT, Tool, ToolCall, ToolRegistry, ToolResult

__all__ = ["Conversation", "RallyOptions", "chat_with_llm", "poke"]

# the approval of a call (`Approvals.ruling`): auto, ask or deny, and why; its last argument says whether a tool
# result of the same turn reached the model before the call (its author may have asked for it)
PolicyFor = Callable[[Tool, ToolCall, bool], Ruling]


@dataclass
class Conversation:
    """One conversation, as memory keeps what its file does not: its id, the salt of its prompts, and the
    lock its turns take one after another. What was said is in its transcript, and only there."""

    id: str = field(default_factory=lambda: secrets.token_hex(6))
    salt: str = field(default_factory=lambda: secrets.token_hex(4))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)


@dataclass
class RallyOptions:
    mode: ToolMode = "auto"  # native, route, xml, or auto (`sidespin.rungs.choose_rung`)
    max_rounds: int = 8
    tool_timeout: float = DEFAULT_TIMEOUT
    system_prompt: str = ""
    keep_turns: int | None = None  # send only the last N user turns (the terminal chat keeps 3)
    turn_seconds: float = 300.0  # wall clock of a whole turn
    turn_tokens: int = 4096  # streamed tokens of a whole turn, every round included
    # results recorded in the version of the turn an edit replaced: a call with the same name and
    # arguments gets its recorded result again instead of running (sidespin.versions)
    reuse: list[ToolResult] = field(default_factory=list)


def _call_key(call: ToolCall) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


class _Turn:
    """Plays one turn; the state that persists across chunks and rounds lives here."""

    def __init__(
        self,
        conversation: Conversation,
        messages: list[dict[str, Any]],
        backend: Backend,
        registry: ToolRegistry,
        options: RallyOptions,
        policy: PolicyFor | None,
        force_tool: str | None,
        control: TurnControl,
    ) -> None:
        self.control = control
        self.conversation = conversation
        self.messages = messages  # the history this turn plays on, and what it says appended as it goes
        self.backend = backend
        self.registry = registry
        self.options = options
        self.policy = policy
        self.force_tool = force_tool
        self.seen: set[str] = set()
        # calls that failed, by key, with the number of calls that had succeeded then: one may be made once more
        # after another call succeeded ("No changes staged for commit. Use git_add …": git_add ran, the commit may)
        self.failed: dict[str, int] = {}
        self.succeeded = 0
        self.reusable = {_call_key(result.call): result for result in options.reuse}
        self.answer: list[str] = []
        self.called: list[str] = []  # the names of every call made in the turn
        self._rung: Rung | None = None
        # events a running call puts into the turn (a server's question): taken at the rally's next step
        self.aside: list[Event] = []
        self.aside_ready = asyncio.Event()
        self.started_at: dict[str, float] = {}  # when each call started (a cancelled one has no result to say)

    def put_aside(self, event: Event) -> None:
        self.aside.append(event)
        self.aside_ready.set()

    def take_aside(self) -> list[Event]:
        """The events running calls put into the turn since the last look."""
        taken, self.aside = self.aside, []
        self.aside_ready.clear()
        return taken

    def start(self, call: ToolCall) -> asyncio.Task[ToolResult]:
        """Run a call in a task of its own, which knows its call (so a server's question can reach this turn);
        the turn's control holds it, so a person can cancel it."""
        async def run() -> ToolResult:
            current_call.set(CallScope(call.id, self.put_aside))
            return await self.registry.execute(call, timeout=self.options.tool_timeout)

        task = asyncio.create_task(run(), name=f"tool-{call.id}")
        self.control.track(call.id, task)
        self.started_at[call.id] = time.perf_counter()
        return task

    def rung(self) -> Rung:
        """The rung of the ladder this turn stands on (a Poke forces its xml block); chosen once a turn."""
        if self._rung is None:
            name = "xml" if self.force_tool else choose_rung(self.backend, self.options.mode).name
            self._rung = rung_named(name)
        return self._rung

    def holds_openings(self) -> bool:
        """Whether an answer that opens like a call is held back: the rung says, and a Poke's never is."""
        return self.rung().holds_openings and not self.force_tool

    def ask(self, round_number: int) -> Ask:
        forced = self.force_tool if self.force_tool in self.registry and round_number == 1 else None
        return Ask(
            history=recent(self.messages, self.options.keep_turns),
            tools=list(self.registry),
            system=self.options.system_prompt,
            salt=self.conversation.salt,
            grammar=self.backend.supports_grammar,
            forced=self.registry.get(forced) if forced else None,
        )

    async def decide(self, current: Round, round_number: int) -> list[Event]:
        """The route's decision before the answer: the calls it chose, dispatched ([] when it chose none)."""
        with counting() as spent:
            try:
                calls = await self.rung().decide(self.backend, self.ask(round_number)) or []
            except MalformedToolCall as error:
                logger.warning("ROUTE_MALFORMED {}", error.reason)
                return [MalformedCall(error.raw, error.reason)]
            finally:  # what deciding cost is part of the turn's usage, whatever was decided
                if spent:
                    prompt, written = spent[-1]
                    current.route_usage = Usage(sum(i for i, _ in spent), sum(o for _, o in spent), prompt + written,
                                                self.backend.context_window)
        events: list[Event] = []
        for call in calls:
            if self.use_retry(call):
                logger.info("ROUTE_CALL_RETRIED conv={} {}: it failed, and another call succeeded since",
                            self.conversation.id, call.name)
            elif _call_key(call) in self.seen:  # after its result, the same call again means the model is done
                logger.info("ROUTE_CALL_AGAIN_SKIPPED conv={} {}", self.conversation.id, call.name)
                continue
            logger.info("ROUTE_CALL conv={} {}", self.conversation.id, call.name)
            events.extend(self.dispatch(call, current))
        return events

    def use_retry(self, call: ToolCall) -> bool:
        """Whether `call` is one that failed, made once more now that another call succeeded since (the error may
        have asked for it): then it is run again, not skipped as a repeat, and its one retry is used up."""
        key = _call_key(call)
        if key not in self.failed or self.succeeded <= self.failed[key]:
            return False
        del self.failed[key]
        self.seen.discard(key)
        return True

    def request(self, round_number: int) -> Request:
        return self.rung().request(self.ask(round_number))

    def dispatch(self, call: ToolCall, current: Round) -> list[Event]:
        """Decide what happens to a complete call: run it now, refuse it, or wait for a person."""
        if holds_call_syntax(call.arguments):  # not run, and its card would show the syntax raw
            reason = (f"the call to {call.name!r} was not run: its arguments hold tool-call syntax, copied from the "
                      "model's instructions rather than asked for")
            logger.warning("TOOL_CALL_SYNTAX_IN_ARGUMENTS conv={} {} id={}", self.conversation.id, call.name, call.id)
            return [MalformedCall(json.dumps({"name": call.name, "arguments": call.arguments}, default=str), reason)]
        events: list[Event] = [ToolProposed(call, after_results=not current.calls and bool(self.called))]
        current.calls.append(call)
        self.called.append(call.name)
        key = _call_key(call)
        if key in self.seen and not self.use_retry(call):
            current.repeats += 1
            current.results[call.id] = ToolResult(
                call, error="this exact call was already made in this turn; use its result above", kind="repeat"
            )
            logger.warning("TOOL_CALL_REPEAT {} id={}", call.name, call.id)
            events.append(ToolFinished(current.results[call.id]))
            return events
        self.seen.add(key)
        decision, why = "auto", ""
        if self.policy is not None and call.name in self.registry:
            decision, why = self.policy(self.registry.get(call.name), call, self.after_result())
        if decision == "deny":
            result = ToolResult(call, error=f"the tool {call.name!r} is not allowed here (approval policy: deny)",
                                kind="denied")
            current.results[call.id] = result
            events.append(ToolFinished(result))
        elif key in self.reusable:  # it ran in the version this one replaces: not again, unless a person asks
            result = dataclasses.replace(self.reusable[key], call=call, reused=True)
            current.results[call.id] = result
            logger.info("TOOL_CALL_REUSED {} id={}", call.name, call.id)
            events.append(ToolFinished(result))
        elif decision == "ask":
            current.pending.append(call)
            logger.info("TOOL_CALL_ASK {} id={} {}", call.name, call.id, why)
            events.append(ApprovalNeeded(call, why))
        else:
            current.tasks[self.start(call)] = call
            events.append(ToolStarted(call))
        return events

    def after_result(self) -> bool:
        """Whether a tool result of this turn (since the person's message) reached the model before its next call."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return False
            if message.get("role") == "tool":
                return True
        return False

    def finished(self, current: Round) -> list[Event]:
        """Results of the tool tasks that are done, without waiting for the others."""
        events: list[Event] = []
        for task in [t for t in current.tasks if t.done()]:
            call = current.tasks.pop(task)
            result = task.result() if not task.cancelled() else self.cancelled(call)
            current.results[result.call.id] = result
            events.append(ToolFinished(result))
        return events

    def cancelled(self, call: ToolCall) -> ToolResult:
        """The result of a call a person cancelled from its card."""
        logger.info("TOOL_CALL_CANCELLED_BY_PERSON {} id={}", call.name, call.id)
        seconds = time.perf_counter() - self.started_at.get(call.id, time.perf_counter())
        return ToolResult(call, error="cancelled by you before it finished; it did not complete", kind="cancelled",
                          seconds=seconds)

    def close_round(self, current: Round) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(current.text)}
        if current.calls:
            message["tool_calls"] = [call_to_openai(call) for call in current.calls]
        self.messages.append(message)
        done = [current.results[call.id] for call in current.calls if call.id in current.results]
        for result in done:
            self.messages.append(tool_message(result))
            if result.kind == "failed":
                self.failed[_call_key(result.call)] = self.succeeded
        self.succeeded += sum(result.ok for result in done)

    def formatted(self, current: Round) -> str | None:
        """The server-side answer when every result of the round has a formatter (the seed's Poke)."""
        if not current.calls or current.pending or len(current.results) != len(current.calls):
            return None
        parts = []
        for call in current.calls:
            result = current.results[call.id]
            tool = self.registry.get(call.name) if call.name in self.registry else None
            if not result.ok or tool is None or tool.formatter is None:
                return None
            parts.append(tool.formatter(result.output))
        return "\n\n".join(parts)


async def _wait_tools(turn: _Turn, current: Round) -> AsyncIterator[Event]:
    """Until every call of the round is done: each result as it comes, and what the calls put aside meanwhile."""
    while current.tasks:
        async with turn.control.bounded():
            aside = asyncio.ensure_future(turn.aside_ready.wait())
            try:
                await asyncio.wait([*current.tasks, aside], return_when=asyncio.FIRST_COMPLETED)
            finally:
                aside.cancel()
        for event in turn.take_aside() + turn.finished(current):
            yield event
    for event in turn.take_aside():
        yield event


async def _abandon_tools(current: Round, why: str) -> list[Event]:
    """Cancel the calls still running (a sync tool is asked to stop too); each gets an error result."""
    tasks = list(current.tasks)
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=2.0)
    events: list[Event] = []
    for task in tasks:
        call = current.tasks.pop(task)
        result = ToolResult(call, error=f"{why} before this call finished; it did not complete", kind="cut")
        current.results[call.id] = result
        logger.warning("TOOL_CALL_ABANDONED {} id={}", call.name, call.id)
        events.append(ToolFinished(result))
    return events


def _decided_round(turn: _Turn, waiting: list[ToolCall], decisions: dict[str, bool]) -> Round:
    """The calls a person decided, as a round whose answer is already in the history."""
    current = Round()
    current.calls = [call for call in waiting if call.id in decisions]
    turn.called.extend(call.name for call in current.calls)
    return current


async def _run_decided(turn: _Turn, current: Round, decisions: dict[str, bool]) -> AsyncIterator[Event]:
    """Run (or refuse) the calls that waited for a person."""
    for call in current.calls:
        turn.seen.add(_call_key(call))
        if decisions[call.id]:
            current.tasks[turn.start(call)] = call
            yield ToolStarted(call)
        else:
            result = ToolResult(call, error="the user refused this tool call", kind="refused")
            current.results[call.id] = result
            logger.info("TOOL_CALL_REFUSED {} id={}", call.name, call.id)
            yield ToolFinished(result)
    async for event in _wait_tools(turn, current):
        yield event


def _record_decided(turn: _Turn, current: Round) -> None:
    for call in current.calls:
        if call.id in current.results:
            put_result(turn.messages, tool_message(current.results[call.id]))


async def _stream_answer(
    turn: _Turn, reader: AnswerReader, current: Round, interceptor: Interceptor, round_number: int
) -> AsyncIterator[Event]:
    """One answer of the model, each piece bounded by the turn's clock, its budget and a person's Stop."""
    current.answering = True
    asked = turn.request(round_number)
    logger.info(
        "LLM_TURN conv={} round={} backend={} mode={} messages={}",
        turn.conversation.id, round_number, turn.backend.name, turn.rung().name, len(asked.messages),
    )
    stream = turn.backend.stream(asked.messages, tools=asked.tools, grammar=asked.grammar)
    if asked.lead:
        stream = _after_lead(stream)
    async with contextlib.aclosing(stream) as stream:
        while True:
            async with turn.control.bounded():
                delta = await anext(stream, None)
            if delta is None:
                return
            turn.control.spend(delta.text + delta.thinking)
            for event in reader.on_delta(delta, interceptor, current) + turn.take_aside() + turn.finished(current):
                yield event
            if delta.usage is not None:  # the record adds up the rounds of the turn
                used = delta.usage
                current.usage = Usage(used.input, used.output, used.input + used.output, turn.backend.context_window,
                                      used.counted)
            if delta.finish_reason == "length":  # the backend's max_tokens: say so, the answer looks finished
                logger.warning("LLM_ANSWER_CUT conv={} round={}", turn.conversation.id, round_number)
                yield ErrorNotice("the answer reached its length limit (max_tokens) and was cut")


async def _after_lead(deltas: AsyncIterator[Delta]) -> AsyncIterator[Delta]:
    """An answer that goes on from a hidden beginning (`Request.lead`) as the person reads it: without the space
    after that beginning, and begun with a capital ("So," + " there are 8 orders" is shown "There are 8 orders")."""
    begun = False
    async with contextlib.aclosing(deltas) as pieces:
        async for delta in pieces:
            if not begun and delta.text:
                text = delta.text.lstrip()
                begun = bool(text)
                delta = dataclasses.replace(delta, text=text[:1].upper() + text[1:])
            yield delta


async def chat_with_llm(
    conversation: Conversation,
    user_text: str | None,
    *,
    backend: Backend,
    registry: ToolRegistry,
    history: list[dict[str, Any]] | None = None,
    options: RallyOptions | None = None,
    policy: PolicyFor | None = None,
    decisions: dict[str, bool] | None = None,
    waiting: list[ToolCall] | None = None,
    force_tool: str | None = None,
    control: TurnControl | None = None,
    images: list[dict[str, Any]] | None = None,
) -> AsyncIterator[Event]:
    """Play one turn of the rally and yield its events.

    `history`: the messages so far; the turn appends what it says to this list (none: a new conversation).
    `user_text` None continues the conversation: of the calls of the last answer that `waiting`
    names (proposed, no result yet), those in `decisions` ({call id: approved}) are run or
    refused and the model goes on; if others still wait, the turn ends waiting for them.
    `policy(tool, call, after_result)` rules auto, ask or deny for each call, with why (default: auto).
    `force_tool` (a tool name) constrains the first answer to one block calling it (the Poke).
    `control` lets a person stop the turn; it also holds the turn's wall-clock and token limits
    (by default those of `options`). Whatever ends the turn, the last event is one `TurnDone`.
    `images`: images the person attached to `user_text` (resources chosen with `@`), for a model with vision.
    """
    options = options or RallyOptions()
    control = control or TurnControl(options.turn_seconds, options.turn_tokens)
    messages = history if history is not None else []
    turn = _Turn(conversation, messages, backend, registry, options, policy, force_tool, control)
    # a local, not the turn's: a turn holding its own methods would be a cycle, outliving its last reference
    reader = AnswerReader(conversation.id, registry, turn.dispatch, turn.holds_openings)
    if user_text is not None:
        messages.append({"role": "user", "content": user_text, **({ATTACHMENTS: images} if images else {})})
    current = Round()
    interceptor = Interceptor(tags=TAGS)
    rounds = 0
    reason = "done"
    decided = user_text is None  # the current round is the calls a person just decided
    try:
        if decided:
            current = _decided_round(turn, waiting or [], decisions or {})
            async for event in _run_decided(turn, current, decisions or {}):
                yield event
            _record_decided(turn, current)
            current, decided = Round(), False
            still = [call for call in waiting or [] if call.id not in (decisions or {})]
            if still:
                yield TurnDone(reason="approval", pending=still)
                return
        for rounds in range(1, options.max_rounds + 1):
            current = Round()
            interceptor = Interceptor(tags=TAGS)
            failure: ErrorNotice | None = None
            try:
                async with turn.control.bounded():
                    decided_calls = await turn.decide(current, rounds)
                for event in decided_calls:
                    yield event
                if not current.calls:  # no call decided before the answer: the model answers (and may call)
                    async for event in _stream_answer(turn, reader, current, interceptor, rounds):
                        yield event
            except BackendError as error:
                logger.error("LLM_ERROR conv={} {}", conversation.id, error)
                failure, reason = ErrorNotice(str(error)), "error"
            for event in reader.on_events(interceptor.close(), current) + reader.on_held(current) + current.take_usage():
                yield event
            if failure is not None:
                yield failure
            async for event in _wait_tools(turn, current):
                yield event
            turn.answer.extend(current.text)
            turn.close_round(current)
            if reason == "error":
                break
            formatted = turn.formatted(current)
            if formatted is not None:
                logger.info("TOOL_RESULT_FORMATTED conv={} chars={}", conversation.id, len(formatted))
                messages.append({"role": "assistant", "content": formatted})
                turn.answer.append(formatted)
                yield TextDelta(formatted)
                break
            if current.pending:
                reason = "approval"
                break
            if not current.calls:
                break
            if current.repeats == len(current.calls):
                yield ErrorNotice("the model repeated a call it had already made; stopping this turn")
                reason = "repeat"
                break
        else:
            yield ErrorNotice(f"stopped after {options.max_rounds} tool rounds (the limit; see max_rounds)")
            reason = "limit"
    except TurnCut as cut:
        for event in reader.on_events(interceptor.close(), current) + reader.on_held(current, calls=False):
            yield event
        for event in current.take_usage(cut=True) + turn.take_aside() + await _abandon_tools(current, cut.why):
            yield event
        if decided:
            _record_decided(turn, current)
        elif current.calls or current.text:  # a round under way: keep what it said
            turn.answer.extend(current.text)
            turn.close_round(current)
        logger.warning("TURN_CUT conv={} reason={} {}", conversation.id, cut.reason, cut.message)
        yield ErrorNotice(cut.message)
        reason = "stopped" if cut.reason == "stopped" else "limit"
    finally:
        for task in current.tasks:
            task.cancel()
    asked_at = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    earlier, found = _results(messages), _results(messages[asked_at + 1:])  # the conversation's, this turn's
    said = " ".join([*(str(m.get("content") or "") for m in messages if m.get("role") in ("user", "system", "tool")),
                     *(str((call.get("function") or {}).get("arguments") or "") for m in messages
                       for call in m.get("tool_calls") or [])])  # what the person, a tool or a call said
    asked = str(messages[asked_at].get("content") or "") if asked_at >= 0 else ""
    claim = unfounded(Facts("".join(turn.answer), list(registry), turn.called, found, earlier, said, asked))
    if claim is not None:
        marker = "TOOL_RESULT_MADE_UP" if turn.called else "TOOL_CLAIM_WITHOUT_CALL"  # beside the results it had
        logger.warning("{} conv={} {}", marker, conversation.id, claim[0][:120])
        yield ErrorNotice(claim[1])
    yield TurnDone(text="".join(turn.answer), rounds=rounds, reason=reason, pending=current.pending)


def _results(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The tool results among `messages`: each tool's name and its output."""
    return [(str(m.get("name") or "a tool"), m["content"]) for m in messages
            if m.get("role") == "tool" and isinstance(m.get("content"), str)]


def poke(
    conversation: Conversation,
    *,
    backend: Backend,
    registry: ToolRegistry,
    history: list[dict[str, Any]] | None = None,
    options: RallyOptions | None = None,
    tool_name: str = "get_cat_fact",
    arguments: dict[str, Any] | None = None,
    policy: PolicyFor | None = None,
) -> AsyncIterator[Event]:
    """The Poke button: a freshly salted one-shot prompt asking for one specific call."""
    return chat_with_llm(
        conversation,
        poke_prompt([registry.get(tool_name)], tool_name=tool_name, arguments=arguments),
        backend=backend,
        registry=registry,
        history=history,
        options=options,
        policy=policy,
        force_tool=tool_name,
    )
