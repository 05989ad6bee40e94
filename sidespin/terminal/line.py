"""A typed line as the message to send: MCP resources and prompts (`sidespin.mcp.attach`, as the page's composer).

`@URI` anywhere in a line attaches that resource (a word that starts with `@` and holds
a `:`; read from the server that lists it); `/name arg=value …` (shell quoting) runs a
prompt and sends its rendered text; `@` alone lists the resources, `/` alone the prompts.
An unknown URI or prompt, or one that cannot be read, is refused and nothing is sent.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from sidespin.errors import AttachmentRefused
from sidespin.mcp.attach import Composed, compose, find_resource, prompt_text

__all__ = ["Line", "read_line"]

_RESOURCE_WORD = re.compile(r"(?<!\S)@(\S*:\S+)")  # @URI: a word that starts with @ and holds a scheme


@dataclass
class Line:
    """What a typed line asks for: a message to send (its resources read), and what to show first."""

    message: Composed | None
    show: str = ""


async def read_line(manager: Any, text: str, *, max_chars: int, conversation: str | None = None) -> Line:
    """A typed line as the message to send: `/` and `@` alone list, `/name a=b` renders a prompt,
    `@URI` attaches a resource; a resource attached earlier in `conversation` that changed goes again.
    `AttachmentRefused` or `MCPServerError` say why nothing is sent."""
    changed = manager.subscriptions.changed(conversation) if manager is not None and conversation else []
    if not changed and not text.startswith("/") and not _RESOURCE_WORD.search(text) and text != "@":
        return Line(Composed(text))
    if manager is None:
        raise AttachmentRefused("no MCP servers are configured (mcp.json): there are no prompts or resources")
    catalog = await manager.catalog()
    problems = "".join(f"\n⚠ {problem}" for problem in catalog.problems)
    if text == "/":
        rows = [f"/{p['name']} {' '.join(_argument(a) for a in p['arguments'])}  ({p['server']}) {p['description'] or ''}"
                for p in catalog.prompts]
        return Line(None, "\n".join(rows or ["no prompts"]) + problems)
    if text == "@":
        rows = [f"@{r['uri']}  ({r['server']}) {r['name']}" for r in catalog.resources]
        rows += [f"@{t['uriTemplate']}  ({t['server']}) template: fill in the {{…}}" for t in catalog.templates]
        return Line(None, "\n".join(rows or ["no resources"]) + problems)
    if text.startswith("/"):
        return await _run_prompt(manager, catalog.prompts, text)
    refs = [find_resource(catalog, match.group(1)) for match in _RESOURCE_WORD.finditer(text)]
    typed = re.sub(r"[ \t]{2,}", " ", _RESOURCE_WORD.sub("", text)).strip()
    composed = await compose(manager, typed, refs, max_chars=max_chars, conversation=conversation)
    sent = [row["uri"] + (" (changed)" if row.get("changed") else "") for row in composed.note.get("attached", [])]
    return Line(composed, "📎 " + ", ".join(sent) if sent else "")


def _argument(argument: dict[str, Any]) -> str:
    return f"{argument['name']}=…" if argument["required"] else f"[{argument['name']}=…]"


async def _run_prompt(manager: Any, prompts: list[dict[str, Any]], text: str) -> Line:
    try:
        words = shlex.split(text[1:])
    except ValueError as error:
        raise AttachmentRefused(f"cannot read the line: {error}") from None
    name, pairs = (words[0], words[1:]) if words else ("", [])
    found = [row for row in prompts if row["name"] == name]
    if not found:
        raise AttachmentRefused(f"no prompt named {name!r}; `/` alone lists the prompts")
    if any("=" not in pair for pair in pairs):
        raise AttachmentRefused(f"write each argument as name=value: /{name} "
                                + " ".join(_argument(a) for a in found[0]["arguments"]))
    arguments = dict(pair.split("=", 1) for pair in pairs)
    missing = [a["name"] for a in found[0]["arguments"] if a["required"] and not arguments.get(a["name"])]
    if missing:
        raise AttachmentRefused(f"/{name} needs {', '.join(missing)}: /{name} "
                                + " ".join(_argument(a) for a in found[0]["arguments"]))
    rendered = prompt_text(await manager.get_prompt(found[0]["server"], name, arguments))
    return Line(Composed(rendered), f"/{name} ({found[0]['server']}):\n{rendered}")
