"""The rally loop against a scripted backend: every path a user can meet, offline and deterministic."""

from __future__ import annotations

import asyncio


from sidespin.approvals import Ruling
from sidespin.errors import BackendError
from sidespin.events import (
    ApprovalNeeded, ErrorNotice, MalformedCall, TextDelta, Thought, ToolFinished, ToolStarted, TurnDone,
)
from sidespin.limits import TurnControl
from sidespin.rally import Conversation, RallyOptions, chat_with_llm, poke
from sidespin.tools import ToolCall, ToolRegistry, tool
from tests.scripted import ScriptedBackend


def block(tool_name: str, **params: object) -> str:
    inner = "".join(f'\n  <param name="{k}">{v}</param>' for k, v in params.items())
    return f'<mcp-request>\n  <tool name="{tool_name}" />{inner}\n</mcp-request>'


@tool(read_only=True)
def say_hello(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("the fuse was lit")


@tool
async def hang() -> str:
    """Never answers."""
    await asyncio.Event().wait()
    return "never"


@tool(formatter=lambda result: f"🐱 {result['fact']}")
def get_cat_fact() -> dict:
    """A cat fact."""
    return {"fact": "Cats sleep a lot."}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def registry() -> ToolRegistry:
    return ToolRegistry([say_hello, explode, hang, get_cat_fact, add])


async def play(conversation, backend, text, **kwargs):
    return [e async for e in chat_with_llm(conversation, text, backend=backend, registry=kwargs.pop("reg", None) or registry(), **kwargs)]


def visible(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_xml_block_is_hidden_run_and_answered():
    backend = ScriptedBackend([
        ["Let me greet. <mcp-req", 'uest>\n  <tool name="say_hello" />\n  <param name="name">Ada', "</param>\n</mcp-request>"],
        ["Done: I greeted Ada."],
    ])
    history: list[dict] = []
    events = await play(Conversation(), backend, "greet Ada", history=history)
    assert "<mcp-request" not in visible(events)
    assert visible(events) == "Let me greet. Done: I greeted Ada."
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.result.output for f in finished] == ["Hello, Ada!"]
    assert isinstance(events[-1], TurnDone) and events[-1].rounds == 2
    # the second model call saw the result, and the history holds the call and the result
    assert "Hello, Ada!" in str(backend.calls[1])
    roles = [m["role"] for m in history]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert history[1]["tool_calls"][0]["function"]["name"] == "say_hello"


async def test_native_tool_calls_are_run_and_sent_back_as_tool_messages():
    backend = ScriptedBackend([[ToolCall("add", {"a": 2, "b": 3}, id="c1")], ["2 + 3 = 5"]], supports_tools=True)
    conversation = Conversation()
    events = await play(conversation, backend, "add 2 and 3")
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == [5]
    second = backend.calls[1]
    assert second[-1] == {"role": "tool", "tool_call_id": "c1", "name": "add", "content": "5"}
    assert second[-2]["tool_calls"][0]["id"] == "c1"
    assert visible(events) == "2 + 3 = 5"


async def test_a_formatter_answers_without_a_second_model_call():
    backend = ScriptedBackend([[block("get_cat_fact")]])
    events = await play(Conversation(), backend, "fact please")
    assert visible(events) == "🐱 Cats sleep a lot."
    assert len(backend.calls) == 1
    assert events[-1].reason == "done"


async def test_model_stopping_mid_block_is_reported_and_the_next_turn_works():
    backend = ScriptedBackend([['Sure <mcp-request>\n  <tool name="say_hello" />'], ["Hello again."]])
    conversation, history = Conversation(), []
    events = await play(conversation, backend, "hi", history=history)
    malformed = [e for e in events if isinstance(e, MalformedCall)]
    assert len(malformed) == 1 and "stopped in the middle" in malformed[0].reason
    assert "<mcp-request" not in visible(events)
    assert isinstance(events[-1], TurnDone)
    events = await play(conversation, backend, "again", history=history)
    assert visible(events) == "Hello again."


async def test_a_block_naming_an_unknown_tool_is_a_clear_malformed_call():
    backend = ScriptedBackend([[block("get_weather", city="Paris")]])
    events = await play(Conversation(), backend, "weather?")
    malformed = [e for e in events if isinstance(e, MalformedCall)]
    assert malformed and "get_weather" in malformed[0].reason
    assert not any(isinstance(e, ToolStarted) for e in events)


async def test_a_tool_that_raises_becomes_a_result_the_model_reads():
    backend = ScriptedBackend([[block("explode")], ["It failed, sorry."]])
    events = await play(Conversation(), backend, "boom")
    finished = [e for e in events if isinstance(e, ToolFinished)][0]
    assert finished.result.error and "the fuse was lit" in finished.result.error
    assert "the fuse was lit" in str(backend.calls[1])
    assert visible(events) == "It failed, sorry."


async def test_a_tool_that_hangs_times_out_and_the_turn_ends_cleanly():
    backend = ScriptedBackend([[block("hang")], ["The tool timed out."]])
    events = await play(Conversation(), backend, "wait", options=RallyOptions(tool_timeout=0.2))
    finished = [e for e in events if isinstance(e, ToolFinished)][0]
    assert "did not answer within 0.2 s" in finished.result.error
    assert events[-1].reason == "done"


async def test_a_person_cancels_one_running_call_and_the_turn_goes_on_without_it():
    control = TurnControl()
    backend = ScriptedBackend([[block("hang"), block("say_hello", name="Bo")], ["Hello went out; the wait was cancelled."]])
    events = []
    async for event in chat_with_llm(Conversation(), "go", backend=backend, registry=registry(), control=control):
        events.append(event)
        if isinstance(event, ToolFinished) and event.result.call.name == "say_hello":
            hanging = next(e.call for e in events if isinstance(e, ToolStarted) and e.call.name == "hang")
            assert control.cancel_call(hanging.id)
            assert not control.cancel_call("call_unknown")
    cancelled = next(e.result for e in events if isinstance(e, ToolFinished) and e.result.call.name == "hang")
    assert cancelled.kind == "cancelled" and cancelled.error.startswith("cancelled by you")
    assert "cancelled by you" in str(backend.calls[1])  # the model reads it
    assert events[-1].reason == "done" and visible(events).endswith("the wait was cancelled.")
    assert not control.cancel_call(hanging.id)  # over: nothing to cancel


async def test_calls_run_in_parallel():
    first_started, second_started = asyncio.Event(), asyncio.Event()

    @tool
    async def ping() -> str:
        """Waits for pong to start."""
        first_started.set()
        await asyncio.wait_for(second_started.wait(), timeout=5)
        return "ping"

    @tool
    async def pong() -> str:
        """Waits for ping to start."""
        second_started.set()
        await asyncio.wait_for(first_started.wait(), timeout=5)
        return "pong"

    backend = ScriptedBackend([[block("ping"), block("pong")], ["both"]])
    events = await play(Conversation(), backend, "go", reg=ToolRegistry([ping, pong]))
    assert sorted(e.result.output for e in events if isinstance(e, ToolFinished)) == ["ping", "pong"]


async def test_a_call_runs_while_the_stream_goes_on():
    backend = ScriptedBackend([[block("say_hello", name="Bo"), " and", " more", " text", " after"], ["ok"]], delay=0.05)
    events = await play(Conversation(), backend, "go")
    finished = next(i for i, e in enumerate(events) if isinstance(e, ToolFinished))
    last_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta) and e.text == " after")
    assert finished < last_text


async def test_the_same_call_repeated_stops_the_turn():
    backend = ScriptedBackend([[block("add", a=1, b=1)], [block("add", a=1, b=1)], ["never reached"]])
    events = await play(Conversation(), backend, "loop")
    assert events[-1].reason == "repeat"
    assert len([e for e in events if isinstance(e, ToolStarted)]) == 1
    assert any(isinstance(e, ErrorNotice) for e in events)


async def test_a_failed_call_runs_again_once_another_call_succeeded_since():
    """"Stage greet.py and commit it": the commit failed ("No changes staged for commit. Use git_add …"), git_add
    ran, and the same commit was skipped as a repeat; nothing was committed."""
    staged: list[str] = []

    @tool
    def stage(file: str) -> str:
        """Stage a file."""
        staged.append(file)
        return f"staged {file}"

    @tool
    def commit(message: str) -> str:
        """Commit what is staged."""
        if not staged:
            raise RuntimeError("No changes staged for commit. Use stage first.")
        return f"committed {staged} as {message!r}"

    backend = ScriptedBackend([[block("commit", message="hi")], [block("stage", file="a.py")],
                               [block("commit", message="hi")], ["Committed."]])
    events = await play(Conversation(), backend, "stage a.py and commit it", reg=ToolRegistry([stage, commit]))
    results = [(e.result.call.name, e.result.ok) for e in events if isinstance(e, ToolFinished)]
    assert results == [("commit", False), ("stage", True), ("commit", True)]
    assert visible(events) == "Committed." and events[-1].reason == "done"
    # the route's decisions, the same way: the commit decided again after the staging runs
    staged.clear()

    class Decisions:
        """The route's choices, one a round: a scripted decider for the loop."""

        def __init__(self, rounds: list[list[ToolCall]]) -> None:
            self.rounds = rounds

        async def decide(self, messages, tools):
            return self.rounds.pop(0) if self.rounds else []

    class Routed(ScriptedBackend):
        supports_routing = True

        async def decider(self):
            return decisions

    decisions = Decisions([[ToolCall("commit", {"message": "hi"})], [ToolCall("stage", {"file": "a.py"})],
                           [ToolCall("commit", {"message": "hi"})]])
    events = await play(Conversation(), Routed([["Committed."]]), "stage a.py and commit it",
                        reg=ToolRegistry([stage, commit]))
    results = [(e.result.call.name, e.result.ok) for e in events if isinstance(e, ToolFinished)]
    assert results == [("commit", False), ("stage", True), ("commit", True)]
    # without a success in between, the failed call again is a repeat: the turn stops
    backend = ScriptedBackend([[block("explode")], [block("explode")], ["never reached"]])
    events = await play(Conversation(), backend, "boom")
    assert events[-1].reason == "repeat"
    assert len([e for e in events if isinstance(e, ToolStarted)]) == 1


async def test_the_round_limit_ends_a_turn():
    backend = ScriptedBackend([[block("add", a=i, b=1)] for i in range(5)])
    events = await play(Conversation(), backend, "loop", options=RallyOptions(max_rounds=3))
    assert events[-1].reason == "limit" and events[-1].rounds == 3
    assert len(backend.calls) == 3


async def test_approval_pauses_and_a_decision_resumes_the_turn():
    backend = ScriptedBackend([[block("add", a=2, b=2)], ["Four."]])
    conversation, history = Conversation(), []
    events = await play(conversation, backend, "2+2", history=history, policy=lambda *_: Ruling("ask"))
    assert any(isinstance(e, ApprovalNeeded) for e in events)
    assert not any(isinstance(e, ToolStarted) for e in events)
    assert events[-1].reason == "approval"
    waiting = events[-1].pending
    assert [c.name for c in waiting] == ["add"]
    events = await play(conversation, backend, None, history=history, waiting=waiting,
                        decisions={waiting[0].id: True})
    assert [e.result.output for e in events if isinstance(e, ToolFinished)] == [4]
    assert visible(events) == "Four."
    assert events[-1].reason == "done" and events[-1].pending == []
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "assistant"]


async def test_a_refused_call_is_told_to_the_model():
    backend = ScriptedBackend([[block("add", a=2, b=2)], ["OK, I will not."]])
    conversation, history = Conversation(), []
    waiting = (await play(conversation, backend, "2+2", history=history, policy=lambda *_: Ruling("ask")))[-1].pending
    call = waiting[0]
    events = await play(conversation, backend, None, history=history, waiting=waiting, decisions={call.id: False})
    assert "refused" in [e for e in events if isinstance(e, ToolFinished)][0].result.error
    assert "refused" in str(backend.calls[1])


async def test_think_blocks_become_thoughts_not_answer_text():
    backend = ScriptedBackend([["<think>The user wants", " a greeting.</think>Hello!"]])
    events = await play(Conversation(), backend, "hi")
    assert [e.text for e in events if isinstance(e, Thought)] == ["The user wants a greeting."]
    assert visible(events) == "Hello!"


async def test_a_backend_failure_keeps_the_conversation_and_the_next_turn_works():
    def failing(messages):
        raise BackendError("cannot reach the model")

    backend = ScriptedBackend([failing, ["Back again."]])
    conversation, history = Conversation(), []
    events = await play(conversation, backend, "first", history=history)
    assert any(isinstance(e, ErrorNotice) and "cannot reach" in e.message for e in events)
    assert events[-1].reason == "error"
    events = await play(conversation, backend, "second", history=history)
    assert visible(events) == "Back again."
    assert [m["content"] for m in history if m["role"] == "user"] == ["first", "second"]


async def test_poke_forces_one_call_and_is_salted_every_time():
    backend = ScriptedBackend([[block("get_cat_fact")], [block("get_cat_fact")]])
    conversation, history = Conversation(), []
    first = [e async for e in poke(conversation, backend=backend, registry=registry(), history=history)]
    second = [e async for e in poke(conversation, backend=backend, registry=registry(), history=history)]
    assert visible(first) == visible(second) == "🐱 Cats sleep a lot."
    prompts = [m["content"] for m in history if m["role"] == "user"]
    assert len(prompts) == 2 and prompts[0] != prompts[1]


async def test_a_model_imitating_result_markup_does_not_show_it():
    backend = ScriptedBackend([["Here: <mcp-response>{\"fake\": 1}</mcp-resp", "onse> done."]])
    events = await play(Conversation(), backend, "hi")
    assert visible(events) == "Here:  done."
