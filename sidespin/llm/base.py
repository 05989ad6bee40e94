"""What every language model backend is: the `Backend` base class, the `Delta`s it streams, and `Grammar`.

Messages are OpenAI-shaped dicts (`role`, `content`, `tool_calls`, `tool_call_id`);
each backend converts them to its own wire format. Backends import from here, never
from `sidespin.llm` (the factory, which imports them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from sidespin.errors import BackendError
from sidespin.tools import Tool, ToolCall

__all__ = ["TokenUsage", "Delta", "Grammar", "Backend"]


@dataclass
class TokenUsage:
    """Tokens one answer cost: `input` (the prompt as the model read it) and `output` (what it wrote).

    `counted`: the backend did not say, so the model's own tokenizer counted them.
    """

    input: int = 0
    output: int = 0
    counted: bool = False


@dataclass
class Delta:
    """A piece of a streamed answer: text, and native tool calls once each is complete."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    thinking: str = ""
    finish_reason: str | None = None
    usage: TokenUsage | None = None  # on the last delta of an answer, when known


@dataclass
class Grammar:
    """A GBNF grammar; with `trigger` set it applies only once the model writes that text."""

    text: str
    trigger: str | None = None


class Backend:
    """Base of all backends. Subclasses implement `stream`; `start`/`aclose` manage resources."""

    name: str = "base"
    model: str = ""
    supports_tools: bool = False
    supports_grammar: bool = False
    supports_routing: bool = False  # llama.cpp's own /completion: the route rung's decisions (see `decider`)
    context_window: int | None = None  # tokens the model can hold (llama.cpp's n_ctx), None when unknown
    supports_images: bool = False  # the model sees images a tool returns (config: "vision"); else their placeholder

    async def start(self) -> None:
        """Open connections or load the model; raise `BackendError` with a readable reason."""

    async def aclose(self) -> None:
        """Release everything `start` opened."""

    async def __aenter__(self) -> "Backend":
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[Tool] | None = None,
        grammar: Grammar | None = None,
    ) -> AsyncIterator[Delta]:
        raise NotImplementedError

    async def decider(self) -> Any:
        """A `sidespin.tooluse.Decider` over this model, for backends with `supports_routing`."""
        raise BackendError(f"the {self.name} backend has no constrained route; use tool_mode native or xml")

    async def warm(self, tools: list[Tool]) -> None:
        """Prepare the route's decision for these tools before the first message (nothing to do by default)."""

    async def count_tokens(self, text: str) -> int | None:
        """How many tokens `text` is for this model, by its own tokenizer; None when the backend has none."""
        return None

    def not_started(self) -> BackendError:
        """The error for a backend used before `start()` (or after `aclose()`)."""
        return BackendError(f"the {self.name} backend is not started: use `async with backend:` or call start()")

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"backend": self.name, "model": self.model, "native_tools": self.supports_tools}
        if self.context_window:
            described["n_ctx"] = self.context_window
        if self.supports_images:
            described["vision"] = True
        return described
