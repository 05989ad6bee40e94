"""What a message carries besides its text, drawn: the resources attached to a user message with `@`
(`sidespin.web.composer` attaches them), and what a tool returned besides its text (an image, a sound, a
resource). `sidespin.web.page` draws both under the message they came with.
"""

from __future__ import annotations

from typing import Any

from fasthtml.common import Audio, Details, Div, Img, Pre, Span, Summary

__all__ = ["AttachedResources", "Attachment"]


def Attachment(item: dict[str, Any]):
    """What a tool returned besides its text: an image, a sound to play, or a resource's URI and text."""
    kind, data = item.get("type"), item.get("data")
    if kind == "image" and data:
        return Img(src=f"data:{item.get('mimeType') or 'image/png'};base64,{data}", cls="attachment")
    if kind == "audio" and data:
        return Audio(controls=True, src=f"data:{item.get('mimeType') or 'audio/wav'};base64,{data}", cls="attachment")
    if kind == "resource":
        return Div(Span("resource", cls="k"), Span(str(item.get("uri", "")), cls="uri"),
                   Pre(str(item.get("text", ""))), cls="attachment resource")
    return ""


def AttachedResources(blocks: list[dict[str, Any]], note: dict[str, Any]):
    """The resources a user message carries (its `blocks`, `sidespin.mcp.attach.attached_blocks`), each collapsed
    under its name; its images (in its `note`) drawn."""
    shown = [Details(Summary(Span("📎", cls="icon"), Span(str(block["name"]), cls="chip-name"),
                             Span(block["server"], cls="chip-server"),
                             *([Span("changed since it was attached", cls="chip-changed")] if block["changed"] else [])),
                     Pre(block["body"]), cls="attached", data_uri=block["uri"], title=block["uri"])
             for block in blocks]
    shown += [Attachment(item) for item in note.get("attachments") or [] if isinstance(item, dict)]
    return Div(*shown, cls="attached-list")
