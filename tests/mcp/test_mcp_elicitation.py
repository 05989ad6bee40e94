"""Questions from servers (elicitation) reach a person and their answers reach the server.

server-everything's `trigger-elicitation-request` asks for a form (strings, a boolean, numbers,
enums, multi-selects) and its result says what it received; the SDK fixture server of
tests/mcp/servers/ask_server.py asks through a 2026-07-28 input-required result.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable

import pytest
from mcp_harness import HAVE_NODE, NO_NODE, SERVERS, everything_stdio

from sidespin.errors import BadAnswer, QuestionClosed
from sidespin.events import Event, QuestionAnswered, QuestionAsked, ToolFinished, TurnDone
from sidespin.mcp import MCPManager, ServerConfig
from sidespin.rally import Conversation, RallyOptions, chat_with_llm
from sidespin.record import TurnRecord
from sidespin.tools import ToolCall, ToolRegistry
from tests.scripted import ScriptedBackend

pytestmark = pytest.mark.node

ASK = "trigger-elicitation-request"


@pytest.fixture(params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> ServerConfig:
    """server-everything over stdio and Streamable HTTP."""
    if request.param == "stdio":
        if not HAVE_NODE:
            pytest.skip(NO_NODE)
        return everything_stdio()
    return ServerConfig(name="everything", transport="http", url=request.getfixturevalue("everything_http"))


def ask_server(**options: object) -> ServerConfig:
    """The SDK server that asks through an input-required result (and through a session request)."""
    return ServerConfig(name="asker", transport="stdio", command=sys.executable,
                        args=[str(SERVERS / "ask_server.py")], **options)


async def play(manager: MCPManager, call: ToolCall, on_question: Callable[[QuestionAsked], None]) -> list[Event]:
    """One turn of a scripted model that makes `call`; each question is answered by `on_question`."""
    registry = ToolRegistry()
    manager.register_into(registry)
    backend = ScriptedBackend([[call], ["done"]], supports_tools=True)
    events: list[Event] = []
    stream: AsyncIterator[Event] = chat_with_llm(Conversation(), "go", backend=backend, registry=registry,
                                                 options=RallyOptions(mode="native"))
    async with asyncio.timeout(60):
        async for event in stream:
            events.append(event)
            if isinstance(event, QuestionAsked):
                on_question(event)
    return events


def result_of(events: list[Event]) -> str:
    finished = [event.result for event in events if isinstance(event, ToolFinished)]
    assert len(finished) == 1
    return finished[0].text() if finished[0].ok else f"error: {finished[0].error}"


async def test_an_accepted_form_reaches_the_server_with_its_values(everything: ServerConfig) -> None:
    async with MCPManager([everything], strict=True) as manager:
        asked: list[QuestionAsked] = []

        def accept(question: QuestionAsked) -> None:
            asked.append(question)
            manager.questions.answer(question.question_id, "accept", {
                "name": "Ada Lovelace", "check": "on", "integer": "7", "number": "2.5",
                "untitledSingleSelectEnum": "Joey", "untitledMultipleSelectEnum": ["Piano", "Drums"],
                "email": "ada@example.org",
            })

        events = await play(manager, ToolCall(ASK, {}), accept)
    assert len(asked) == 1 and asked[0].server == "everything" and "name" in asked[0].schema["properties"]
    text = result_of(events)
    assert "- Name: Ada Lovelace" in text
    assert "- Agreed to terms: true" in text
    assert "- Favorite Integer: 7" in text and "- Favorite Number: 2.5" in text
    assert '"Piano"' in text and '"Drums"' in text
    answered = [event for event in events if isinstance(event, QuestionAnswered)]
    assert answered[0].action == "accept" and answered[0].content["integer"] == 7
    card = next(iter(TurnRecord.replay(events).calls.values()))
    assert card.questions[0].action == "accept" and card.status == "done"


@pytest.mark.parametrize("action, says", [("decline", "User declined"), ("cancel", "User cancelled")])
async def test_decline_and_cancel_reach_the_server(everything: ServerConfig, action: str, says: str) -> None:
    async with MCPManager([everything], strict=True) as manager:
        events = await play(manager, ToolCall(ASK, {}),
                            lambda q: manager.questions.answer(q.question_id, action))
    assert says in result_of(events)


async def test_a_bad_answer_is_refused_and_the_question_stays_open(everything: ServerConfig) -> None:
    async with MCPManager([everything], strict=True) as manager:
        refusals: list[str] = []

        def answer_twice(question: QuestionAsked) -> None:
            with pytest.raises(BadAnswer) as refused:
                manager.questions.answer(question.question_id, "accept", {"integer": "700", "email": "not-an-email"})
            refusals.extend(refused.value.problems)
            assert manager.questions.is_open(question.question_id)
            manager.questions.answer(question.question_id, "accept", {"name": "Grace", "integer": "100"})
            with pytest.raises(QuestionClosed):  # the second answer is the one that counts
                manager.questions.answer(question.question_id, "decline")

        events = await play(manager, ToolCall(ASK, {}), answer_twice)
    assert any("an answer is required" in problem for problem in refusals)  # name is required
    assert any("at most 100" in problem for problem in refusals)
    assert any("not an email address" in problem for problem in refusals)
    assert "- Name: Grace" in result_of(events)


async def test_an_unanswered_question_ends_with_the_call_timeout() -> None:
    if not HAVE_NODE:
        pytest.skip(NO_NODE)
    async with MCPManager([everything_stdio(timeout=1.5)], strict=True) as manager:
        asked: list[str] = []
        started = asyncio.get_running_loop().time()
        events = await play(manager, ToolCall(ASK, {}), lambda q: asked.append(q.question_id))
        took = asyncio.get_running_loop().time() - started
        assert asked and not manager.questions.is_open(asked[0])
        with pytest.raises(QuestionClosed, match="call ended"):
            manager.questions.answer(asked[0], "accept", {"name": "late"})
    assert "did not answer within 1.5 s" in result_of(events)
    assert took < 15
    card = next(iter(TurnRecord.replay(events).calls.values()))
    assert card.status == "error" and card.questions[0].action is None and not card.open_questions()


async def test_a_question_without_a_running_chat_call_is_declined(everything: ServerConfig) -> None:
    async with MCPManager([everything], strict=True) as manager:
        result = await manager.call("everything", ASK, {})
    assert "User declined" in result.text()


async def test_an_input_required_question_is_answered_like_a_session_question() -> None:
    async with MCPManager([ask_server()], strict=True) as manager:
        assert manager.client("asker").protocol_version == "2026-07-28"
        events = await play(manager, ToolCall("ask_color", {}),
                            lambda q: manager.questions.answer(q.question_id, "accept", {"color": "green"}))
    assert result_of(events) == "you chose green"
    assert [type(e).__name__ for e in events if isinstance(e, (QuestionAsked, QuestionAnswered))] == [
        "QuestionAsked", "QuestionAnswered"]


async def test_an_input_required_question_declined() -> None:
    async with MCPManager([ask_server()], strict=True) as manager:
        events = await play(manager, ToolCall("ask_color", {}),
                            lambda q: manager.questions.answer(q.question_id, "decline"))
    assert result_of(events) == "you declined"


async def test_a_turn_done_closes_nothing_left_open(everything: ServerConfig) -> None:
    async with MCPManager([everything], strict=True) as manager:
        events = await play(manager, ToolCall(ASK, {}), lambda q: manager.questions.answer(q.question_id, "cancel"))
    assert isinstance(events[-1], TurnDone) and events[-1].reason == "done"


@pytest.mark.parametrize("action, says", [("accept", "User completed the URL elicitation flow"),
                                          ("decline", "User declined to open the URL")])
async def test_a_url_question_shows_its_link_and_the_answer_reaches_the_server(
        everything: ServerConfig, action: str, says: str) -> None:
    url = "https://example.org/approve?step=2"
    async with MCPManager([everything], strict=True) as manager:
        asked: list[QuestionAsked] = []

        def answer(question: QuestionAsked) -> None:
            asked.append(question)
            manager.questions.answer(question.question_id, action)

        events = await play(manager, ToolCall("trigger-url-elicitation", {"url": url, "message": "Approve it"}), answer)
    assert len(asked) == 1 and asked[0].url == url and asked[0].message == "Approve it" and asked[0].schema is None
    assert says in result_of(events)
    card = next(iter(TurnRecord.replay(events).calls.values()))
    assert card.questions[0].url == url and card.questions[0].action == action

    # while it waits, the card shows the link to open (the events up to the question)
    from fasthtml.common import to_xml

    from sidespin.web.page import ToolCard

    waiting = TurnRecord.replay(events[:events.index(asked[0]) + 1])
    drawn = to_xml(ToolCard(next(iter(waiting.calls.values()))))
    assert f'href="{url}"' in drawn and "Approve it" in drawn


async def test_input_required_questions_of_two_calls_at_once_each_go_to_their_own_call() -> None:
    first = ToolCall("ask_color", {"label": "the door"}, id="call_first")
    second = ToolCall("ask_color", {"label": "the wall"}, id="call_second")
    colors = {"call_first": "green", "call_second": "red"}
    async with MCPManager([ask_server()], strict=True) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        backend = ScriptedBackend([[first, second], ["done"]], supports_tools=True)
        asked: list[QuestionAsked] = []
        events: list[Event] = []
        async with asyncio.timeout(60):
            async for event in chat_with_llm(Conversation(), "go", backend=backend, registry=registry,
                                             options=RallyOptions(mode="native")):
                events.append(event)
                if isinstance(event, QuestionAsked):
                    asked.append(event)
                    if len(asked) == 2:  # both calls wait at once: each answered by the call its card names
                        for question in asked:
                            manager.questions.answer(question.question_id, "accept", {"color": colors[question.call_id]})
    assert sorted(question.call_id for question in asked) == ["call_first", "call_second"]
    results = {event.result.call.id: event.result.text() for event in events if isinstance(event, ToolFinished)}
    assert results == {"call_first": "you chose green for the door", "call_second": "you chose red for the wall"}
    cards = TurnRecord.replay(events).calls
    assert [q.content for q in cards["call_first"].questions] == [{"color": "green"}]
