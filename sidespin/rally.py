"""The rally: `chat_with_llm` streams a model's answer, intercepts its tool calls and plays them.

One turn runs in rounds. Each round streams the model's answer through the
`Interceptor`: visible text goes out at once as `TextDelta`, a complete
`<mcp-request>` block (or a native tool call) is dispatched at once as an
asyncio task while the stream goes on. When the stream ends, the results go
back as tool messages and the model is called again, until it answers
without a call, a server-side formatter answers for it, a call waits for a
person's approval, or the round limit is reached.

The conversation's `messages` (OpenAI-shaped, without the system prompt) are
the only state; calls that wait for approval are the last assistant message's
`tool_calls` that have no tool message yet.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from loguru import logger

from sidespin.errors import BackendError, MalformedToolCall
from sidespin.events import (
    ApprovalNeeded,
    ErrorNotice,
    Event,
    MalformedCall,
    TextDelta,
    Thought,
    ToolFinished,
    ToolProposed,
    ToolStarted,
    TurnDone,
)
from sidespin.intercept import Block, Interceptor, Text
from sidespin.llm import Backend, Delta, Grammar
from sidespin.protocol import format_block, grammar_for, parse_request, poke_prompt, teaching_prompt
from sidespin.tools import DEFAULT_TIMEOUT, Tool, ToolCall, ToolRegistry, ToolResult

__all__ = ["Conversation", "RallyOptions", "chat_with_llm", "poke", "pending_calls"]

MCP_TAG = "mcp-request"
THINK_TAG = "think"
# A small model sometimes imitates the result markup it saw in the history; that is never answer text.
ECHO_TAG = "mcp-response"

Policy = Callable[[Tool], str]


@dataclass
class Conversation:
    """One conversation: its id and the messages exchanged so far."""

    id: str = field(default_factory=lambda: secrets.token_hex(6))
    messages: list[dict[str, Any]] = field(default_factory=list)
    salt: str = field(default_factory=lambda: secrets.token_hex(4))
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False, compare=False)


@dataclass
class RallyOptions:
    mode: str = "auto"  # xml, native or auto
    max_rounds: int = 8
    tool_timeout: float = DEFAULT_TIMEOUT
    system_prompt: str = ""
    keep_turns: int | None = None  # send only the last N user turns (the terminal chat keeps 3)


def pending_calls(messages: list[dict[str, Any]]) -> list[ToolCall]:
    """Calls of the last assistant message that have no result yet: they wait for a person."""
    answered = set()
    for message in reversed(messages):
        if message["role"] == "tool":
            answered.add(message.get("tool_call_id"))
        elif message["role"] == "assistant" and message.get("tool_calls"):
            return [
                _call_from_openai(item) for item in message["tool_calls"] if item["id"] not in answered
            ]
        elif message["role"] in ("assistant", "user"):
            return []
    return []


def _call_from_openai(item: dict[str, Any]) -> ToolCall:
    function = item["function"]
    arguments = function.get("arguments") or "{}"
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
    except json.JSONDecodeError:
        parsed = {"__malformed__": arguments}
    return ToolCall(name=function["name"], arguments=parsed, id=item["id"])


def _openai_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments_json()}}


def _tool_message(result: ToolResult) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": result.call.id, "name": result.call.name, "content": result.text()}


def _call_key(call: ToolCall) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


def _xml_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history as a model without native tool support reads it: calls as blocks, results as text."""
    converted: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "assistant" and message.get("tool_calls"):
            blocks = "\n".join(format_block(_call_from_openai(item)) for item in message["tool_calls"])
            content = ((message.get("content") or "") + "\n" + blocks).strip()
            converted.append({"role": "assistant", "content": content})
        elif message["role"] == "tool":
            content = (
                f'<mcp-response tool="{message.get("name", "")}" id="{message.get("tool_call_id", "")}">\n'
                f'{message["content"]}\n</mcp-response>'
            )
            converted.append({"role": "user", "content": content})
        else:
            converted.append({"role": message["role"], "content": message.get("content") or ""})
    merged: list[dict[str, Any]] = []
    for message in converted:  # chat templates want roles to alternate
        if merged and merged[-1]["role"] == message["role"] and message["role"] != "system":
            merged[-1] = {**merged[-1], "content": merged[-1]["content"] + "\n\n" + message["content"]}
        else:
            merged.append(message)
    return merged


def _recent(messages: list[dict[str, Any]], keep_turns: int | None) -> list[dict[str, Any]]:
    if not keep_turns:
        return list(messages)
    starts = [i for i, message in enumerate(messages) if message["role"] == "user"]
    return list(messages[starts[-keep_turns]:]) if len(starts) > keep_turns else list(messages)


class _Round:
    """What one model answer produced: its visible text, its calls and the running tool tasks."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: list[ToolCall] = []
        self.tasks: dict[asyncio.Task[ToolResult], ToolCall] = {}
        self.results: dict[str, ToolResult] = {}
        self.pending: list[ToolCall] = []
        self.repeats = 0


class _Turn:
    """Plays one turn; the state that persists across chunks and rounds lives here."""

    def __init__(
        self,
        conversation: Conversation,
        backend: Backend,
        registry: ToolRegistry,
        options: RallyOptions,
        policy: Policy | None,
        force_tool: str | None,
    ) -> None:
        self.conversation = conversation
        self.backend = backend
        self.registry = registry
        self.options = options
        self.policy = policy
        self.force_tool = force_tool
        self.seen: set[str] = set()
        self.answer: list[str] = []

    def mode(self) -> str:
        if self.force_tool:
            return "xml"
        if self.options.mode == "auto":
            return "native" if self.backend.supports_tools else "xml"
        return self.options.mode

    def request(self, round_number: int) -> tuple[list[dict[str, Any]], list[Tool] | None, Grammar | None]:
        tools = list(self.registry)
        history = _recent(self.conversation.messages, self.options.keep_turns)
        system = self.options.system_prompt.strip()
        if self.mode() == "native":
            messages = ([{"role": "system", "content": system}] if system else []) + history
            return messages, tools or None, None
        forced = bool(self.force_tool) and round_number == 1
        # a Poke's own prompt teaches the one tool it asks for; a second copy would only slow the prefill
        teaching = teaching_prompt(tools, salt=self.conversation.salt) if tools and not forced else ""
        system = "\n\n".join(part for part in (system, teaching) if part)
        messages = ([{"role": "system", "content": system}] if system else []) + _xml_history(history)
        grammar = None
        if tools and self.backend.supports_grammar:
            if forced and self.force_tool in self.registry:
                # the first answer must be one block calling exactly the asked-for tool
                grammar = Grammar(grammar_for([self.registry.get(self.force_tool)]))
            else:
                grammar = Grammar(grammar_for(tools), trigger="<" + MCP_TAG)
        return messages, None, grammar

    def dispatch(self, call: ToolCall, current: _Round) -> list[Event]:
        """Decide what happens to a complete call: run it now, refuse it, or wait for a person."""
        current.calls.append(call)
        events: list[Event] = [ToolProposed(call)]
        key = _call_key(call)
        if key in self.seen:
            current.repeats += 1
            current.results[call.id] = ToolResult(
                call, error="this exact call was already made in this turn; use its result above"
            )
            logger.warning("TOOL_CALL_REPEAT {} id={}", call.name, call.id)
            events.append(ToolFinished(current.results[call.id]))
            return events
        self.seen.add(key)
        decision = "auto"
        if self.policy is not None and call.name in self.registry:
            decision = self.policy(self.registry.get(call.name))
        if decision == "deny":
            result = ToolResult(call, error=f"the tool {call.name!r} is not allowed here (approval policy: deny)")
            current.results[call.id] = result
            events.append(ToolFinished(result))
        elif decision == "ask":
            current.pending.append(call)
            logger.info("TOOL_CALL_ASK {} id={}", call.name, call.id)
            events.append(ApprovalNeeded(call))
        else:
            task = asyncio.create_task(self.registry.execute(call, timeout=self.options.tool_timeout))
            current.tasks[task] = call
            events.append(ToolStarted(call))
        return events

    def on_block(self, block: Block, current: _Round) -> list[Event]:
        if block.tag == ECHO_TAG:
            logger.info("MCP_RESPONSE_ECHO_HIDDEN conv={} chars={}", self.conversation.id, len(block.raw))
            logger.debug("MCP_RESPONSE_ECHO_RAW {}", block.raw)
            return []
        if block.tag == THINK_TAG:
            inner = block.raw[len("<think>"):]
            inner = inner[: -len("</think>")] if block.closed else inner
            return [Thought(inner.strip(), closed=block.closed)]
        logger.info("MCP_BLOCK_HIDDEN conv={} chars={} closed={}", self.conversation.id, len(block.raw), block.closed)
        logger.debug("MCP_BLOCK_RAW {}", block.raw)
        if not block.closed:
            reason = f"the model stopped in the middle of a tool call (no </{MCP_TAG}>)"
            logger.warning("MCP_BLOCK_MALFORMED {}", reason)
            return [MalformedCall(block.raw, reason)]
        try:
            call = parse_request(block.raw, self.registry)
        except MalformedToolCall as error:
            logger.warning("MCP_BLOCK_MALFORMED {}", error.reason)
            return [MalformedCall(block.raw, error.reason)]
        return self.dispatch(call, current)

    def on_native(self, call: ToolCall, current: _Round) -> list[Event]:
        if "__malformed__" in call.arguments:
            reason = f"the arguments of {call.name!r} are not valid JSON"
            return [MalformedCall(str(call.arguments["__malformed__"]), reason)]
        return self.dispatch(call, current)

    def on_events(self, found: list[Text | Block], current: _Round) -> list[Event]:
        events: list[Event] = []
        for item in found:
            if isinstance(item, Text):
                if item.text:
                    current.text.append(item.text)
                    events.append(TextDelta(item.text))
            else:
                events.extend(self.on_block(item, current))
        return events

    def on_delta(self, delta: Delta, interceptor: Interceptor, current: _Round) -> list[Event]:
        events: list[Event] = [Thought(delta.thinking, closed=False)] if delta.thinking else []
        if delta.text:
            events.extend(self.on_events(interceptor.feed(delta.text), current))
        for call in delta.tool_calls:
            events.extend(self.on_native(call, current))
        return events

    @staticmethod
    def finished(current: _Round) -> list[Event]:
        """Results of the tool tasks that are done, without waiting for the others."""
        events: list[Event] = []
        for task in [t for t in current.tasks if t.done()]:
            result = task.result()
            current.results[result.call.id] = result
            del current.tasks[task]
            events.append(ToolFinished(result))
        return events

    def close_round(self, current: _Round) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(current.text)}
        if current.calls:
            message["tool_calls"] = [_openai_call(call) for call in current.calls]
        self.conversation.messages.append(message)
        for call in current.calls:
            if call.id in current.results:
                self.conversation.messages.append(_tool_message(current.results[call.id]))

    def formatted(self, current: _Round) -> str | None:
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


async def _wait_tools(turn: _Turn, current: _Round) -> AsyncIterator[Event]:
    while current.tasks:
        await asyncio.wait(list(current.tasks), return_when=asyncio.FIRST_COMPLETED)
        for event in turn.finished(current):
            yield event


async def _run_decided(turn: _Turn, decisions: dict[str, bool]) -> AsyncIterator[Event]:
    """Run (or refuse) the calls that waited for a person, then record their results."""
    waiting = pending_calls(turn.conversation.messages)
    current = _Round()
    for call in waiting:
        turn.seen.add(_call_key(call))
        if decisions.get(call.id):
            task = asyncio.create_task(turn.registry.execute(call, timeout=turn.options.tool_timeout))
            current.tasks[task] = call
            yield ToolStarted(call)
        elif call.id in decisions:
            result = ToolResult(call, error="the user refused this tool call")
            current.results[call.id] = result
            logger.info("TOOL_CALL_REFUSED {} id={}", call.name, call.id)
            yield ToolFinished(result)
    async for event in _wait_tools(turn, current):
        yield event
    for call in waiting:
        if call.id in current.results:
            turn.conversation.messages.append(_tool_message(current.results[call.id]))


async def chat_with_llm(
    conversation: Conversation,
    user_text: str | None,
    *,
    backend: Backend,
    registry: ToolRegistry,
    options: RallyOptions | None = None,
    policy: Policy | None = None,
    decisions: dict[str, bool] | None = None,
    force_tool: str | None = None,
) -> AsyncIterator[Event]:
    """Play one turn of the rally and yield its events.

    `user_text` None continues the conversation: calls that waited for approval are
    run or refused according to `decisions` ({call id: approved}) and the model goes on.
    `policy(tool)` answers auto, ask or deny for each call (default: auto).
    `force_tool` (a tool name) constrains the first answer to one block calling it (the Poke).
    """
    options = options or RallyOptions()
    turn = _Turn(conversation, backend, registry, options, policy, force_tool)
    if user_text is not None:
        conversation.messages.append({"role": "user", "content": user_text})
    current = _Round()
    try:
        if user_text is None:
            async for event in _run_decided(turn, decisions or {}):
                yield event
            if pending_calls(conversation.messages):
                yield TurnDone(reason="approval", pending=pending_calls(conversation.messages))
                return
        for round_number in range(1, options.max_rounds + 1):
            current = _Round()
            messages, tools, grammar = turn.request(round_number)
            logger.info(
                "LLM_TURN conv={} round={} backend={} mode={} messages={}",
                conversation.id, round_number, backend.name, turn.mode(), len(messages),
            )
            interceptor = Interceptor(tags=(MCP_TAG, THINK_TAG, ECHO_TAG))
            try:
                async for delta in backend.stream(messages, tools=tools, grammar=grammar):
                    for event in turn.on_delta(delta, interceptor, current) + turn.finished(current):
                        yield event
            except BackendError as error:
                for event in turn.on_events(interceptor.close(), current):
                    yield event
                logger.error("LLM_ERROR conv={} {}", conversation.id, error)
                yield ErrorNotice(str(error))
                async for event in _wait_tools(turn, current):
                    yield event
                turn.close_round(current)
                yield TurnDone(text="".join(turn.answer + current.text), rounds=round_number, reason="error")
                return
            for event in turn.on_events(interceptor.close(), current):
                yield event
            async for event in _wait_tools(turn, current):
                yield event
            turn.answer.extend(current.text)
            turn.close_round(current)
            formatted = turn.formatted(current)
            if formatted is not None:
                logger.info("TOOL_RESULT_FORMATTED conv={} chars={}", conversation.id, len(formatted))
                conversation.messages.append({"role": "assistant", "content": formatted})
                turn.answer.append(formatted)
                yield TextDelta(formatted)
                yield TurnDone(text="".join(turn.answer), rounds=round_number)
                return
            if current.pending:
                yield TurnDone(text="".join(turn.answer), rounds=round_number, reason="approval", pending=current.pending)
                return
            if not current.calls:
                yield TurnDone(text="".join(turn.answer), rounds=round_number)
                return
            if current.repeats == len(current.calls):
                yield ErrorNotice("the model repeated a call it had already made; stopping this turn")
                yield TurnDone(text="".join(turn.answer), rounds=round_number, reason="repeat")
                return
        yield ErrorNotice(f"stopped after {options.max_rounds} tool rounds (the limit; see max_rounds)")
        yield TurnDone(text="".join(turn.answer), rounds=options.max_rounds, reason="limit")
    finally:
        for task in current.tasks:
            task.cancel()


def poke(
    conversation: Conversation,
    *,
    backend: Backend,
    registry: ToolRegistry,
    options: RallyOptions | None = None,
    tool_name: str = "get_cat_fact",
    arguments: dict[str, Any] | None = None,
    policy: Policy | None = None,
) -> AsyncIterator[Event]:
    """The Poke button: a freshly salted one-shot prompt asking for one specific call."""
    return chat_with_llm(
        conversation,
        poke_prompt([registry.get(tool_name)], tool_name=tool_name, arguments=arguments),
        backend=backend,
        registry=registry,
        options=options,
        policy=policy,
        force_tool=tool_name,
    )
