"""What the MCP servers offer besides tools: resources, resource templates and prompts, as sidespin reads them.

    catalog = await manager.catalog()        # every ready server's listings, and what went wrong where
    catalog.resources                        # [{"server", "uri", "name", "mimeType", "description"}]
    catalog.templates                        # [{"server", "uriTemplate", "name", "mimeType", "description"}]
    catalog.prompts                          # [{"server", "name", "description", "arguments": [...]}]
    await manager.read_resource("everything", uri)         # -> Reading(text, attachments)
    await manager.get_prompt("everything", "args-prompt", {"city": "Paris"})   # -> [PromptMessage]

Rows are plain JSON-ready dicts (what `sidespin resources --json` and `sidespin prompts --json` print);
attachments are `{"type": "image"|"audio", "mimeType", "data"}`, as for a tool's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from sidespin.mcp.content import render_blocks, render_resource_contents

__all__ = [
    "Catalog",
    "PromptMessage",
    "Reading",
    "prompt_messages",
    "prompt_row",
    "reading",
    "resource_row",
    "template_row",
]


@dataclass
class Catalog:
    """Every server's resources, templates and prompts; `problems` says, server by server, what could not be listed."""

    resources: list[dict[str, Any]] = field(default_factory=list)
    templates: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def extend(self, other: Catalog) -> None:
        self.resources += other.resources
        self.templates += other.templates
        self.prompts += other.prompts
        self.problems += other.problems


@dataclass(frozen=True)
class Reading:
    """A resource's contents: the text (binary parts as placeholders), images and audio as attachments."""

    text: str
    attachments: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class PromptMessage:
    """One message of a prompt a server filled in: who says it, its text, its images and audio."""

    role: str
    text: str
    attachments: list[dict[str, Any]] = field(default_factory=list)


def resource_row(server: str, resource: types.Resource) -> dict[str, Any]:
    return {
        "server": server,
        "uri": str(resource.uri),
        "name": resource.name,
        "mimeType": resource.mime_type,
        "description": resource.description,
    }


def template_row(server: str, template: types.ResourceTemplate) -> dict[str, Any]:
    return {
        "server": server,
        "uriTemplate": template.uri_template,
        "name": template.name,
        "mimeType": template.mime_type,
        "description": template.description,
    }


def prompt_row(server: str, prompt: types.Prompt) -> dict[str, Any]:
    return {
        "server": server,
        "name": prompt.name,
        "description": prompt.description,
        "arguments": [
            {"name": argument.name, "description": argument.description, "required": bool(argument.required)}
            for argument in prompt.arguments or []
        ],
    }


def reading(result: types.ReadResourceResult) -> Reading:
    texts, attachments = render_resource_contents(result.contents)
    return Reading(text="\n".join(texts), attachments=attachments)


def prompt_messages(result: types.GetPromptResult) -> list[PromptMessage]:
    messages = []
    for message in result.messages:
        texts, attachments = render_blocks([message.content])
        messages.append(PromptMessage(role=message.role, text="\n".join(texts), attachments=attachments))
    return messages
