"""The tool card draws what a tool returned besides its text: images, sound, embedded resources."""

from __future__ import annotations

from fasthtml.common import to_xml

from sidespin.record import CallRecord
from sidespin.tools import ToolCall, ToolResult
from sidespin.web.page import ToolCard

WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="


def finished(result: ToolResult) -> CallRecord:
    card = CallRecord(result.call)
    card.finish(result)
    return card


def test_a_card_plays_the_sound_a_tool_returned_and_shows_an_embedded_resource() -> None:
    result = ToolResult(ToolCall("say", {}, "call_a"), output="[audio: audio/wav, 44 bytes]\nthe note", attachments=[
        {"type": "audio", "mimeType": "audio/wav", "data": WAV},
        {"type": "resource", "uri": "test://note", "mimeType": "text/plain", "text": "the note <b>"},
    ])
    html = to_xml(ToolCard(finished(result)))
    assert f'<audio controls src="data:audio/wav;base64,{WAV}" class="attachment"></audio>' in html
    assert "test://note" in html and "the note &lt;b&gt;" in html  # the resource's text is text, never markup


def test_a_card_draws_an_image_and_nothing_for_an_attachment_it_does_not_know() -> None:
    result = ToolResult(ToolCall("snap", {}, "call_b"), output="a picture", attachments=[
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "video", "mimeType": "video/mp4", "data": "AAAA"},
    ])
    html = to_xml(ToolCard(finished(result)))
    assert '<img src="data:image/png;base64,iVBORw0KGgo=" class="attachment">' in html
    assert "AAAA" not in html
