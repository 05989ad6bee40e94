"""The long-lived parts of sidespin, opened once and shared by the web app and the CLI.

`Engine.open(settings)` starts the backend, loads the plugins, connects the
MCP servers and yields an engine; leaving the context closes them all.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, AsyncIterator

from loguru import logger

from sidespin.config import Settings
from sidespin.events import Event
from sidespin.live import LiveTurn
from sidespin.llm import Backend, make_backend
from sidespin.rally import Conversation, RallyOptions, chat_with_llm, poke
from sidespin.tools import Tool, ToolRegistry, load_plugins, plugins_dir

__all__ = ["Engine"]


class Engine:
    """Backend, tools and conversations of one running sidespin."""

    def __init__(self, settings: Settings, backend: Backend, registry: ToolRegistry, *, approval: str = "auto") -> None:
        self.settings = settings
        self.backend = backend
        self.registry = registry
        self.approval = approval
        self.mcp: Any = None
        self.conversations: dict[str, Conversation] = {}
        self.turns: dict[str, LiveTurn] = {}

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
    ) -> AsyncIterator["Engine"]:
        registry = ToolRegistry(load_plugins(plugins or plugins_dir()))
        logger.info("PLUGINS_LOADED {} tools: {}", len(registry), ", ".join(registry.names()))
        backend = backend or make_backend(settings)
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(backend)
            engine = cls(settings, backend, registry, approval=settings.approval or approval)
            engine.mcp = await _open_mcp(stack, settings, registry, strict_mcp)
            logger.info("ENGINE_READY backend={} model={} tools={}", backend.name, backend.model, len(registry))
            yield engine

    @property
    def options(self) -> RallyOptions:
        s = self.settings
        return RallyOptions(mode=s.tool_mode, max_rounds=s.max_rounds, tool_timeout=s.tool_timeout, system_prompt=s.system_prompt)

    def policy(self, conversation: Conversation):
        """The approval policy for a conversation's calls: auto, ask or deny per tool."""
        per_tool = {name: opts.get("approval") for name, opts in self.settings.tools.items() if opts.get("approval")}
        default = self.approval

        def decide(tool: Tool) -> str:
            if tool.name in per_tool:
                return per_tool[tool.name]
            if default == "ask" and tool.read_only and not tool.destructive:
                return "auto"
            return default

        return decide

    def conversation(self, conversation_id: str | None = None) -> Conversation:
        if conversation_id and conversation_id in self.conversations:
            return self.conversations[conversation_id]
        conversation = Conversation(id=conversation_id) if conversation_id else Conversation()
        self.conversations[conversation.id] = conversation
        return conversation

    def events(
        self,
        conversation: Conversation,
        user_text: str | None,
        *,
        poke_tool: str | None = None,
        decisions: dict[str, bool] | None = None,
    ) -> AsyncIterator[Event]:
        if poke_tool:
            return poke(conversation, backend=self.backend, registry=self.registry, options=self.options, tool_name=poke_tool)
        return chat_with_llm(
            conversation,
            user_text,
            backend=self.backend,
            registry=self.registry,
            options=self.options,
            policy=self.policy(conversation),
            decisions=decisions,
        )

    def start_turn(
        self,
        conversation: Conversation,
        user_text: str | None,
        *,
        poke_tool: str | None = None,
        decisions: dict[str, bool] | None = None,
    ) -> LiveTurn:
        """Play a turn in the background; turns of one conversation queue up, never interleave."""
        live = LiveTurn(conversation.id)

        async def serialized() -> AsyncIterator[Event]:
            async with conversation.lock:
                async for event in self.events(conversation, user_text, poke_tool=poke_tool, decisions=decisions):
                    yield event

        self.turns[live.id] = live
        return live.start(serialized())

    def health(self) -> dict[str, Any]:
        return {
            "status": "ok",
            **self.backend.describe(),
            "tools": len(self.registry),
            "mcp_servers": self.mcp.state() if self.mcp is not None else {},
        }


async def _open_mcp(stack: contextlib.AsyncExitStack, settings: Settings, registry: ToolRegistry, strict: bool) -> Any:
    """Connect the servers of mcp.json, if there is one, and add their tools to the registry."""
    path = Path(settings.mcp_config)
    if not path.exists():
        return None
    from sidespin.mcp import MCPManager, load_mcp_config

    configs = load_mcp_config(path)
    manager = await stack.enter_async_context(MCPManager(configs, strict=strict))
    manager.register_into(registry)
    return manager
