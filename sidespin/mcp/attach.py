"""Resources attached to a message with `@`, and prompts run with `/`: the one place for both, page and terminal.

    ref = find_resource(catalog, "demo://resource/static/document/features.md")  # which server lists it
    composed = await compose(manager, "Summarise this", [ref], max_chars=100_000, conversation=cid)
    composed.text      # the typed text, then one fenced block per attached resource (what the model reads)
    composed.note      # {"attached": [{server, uri, name, lines}], "attachments": [images]}: the user turn's note
    typed, blocks = attached_blocks(composed.text, composed.note)   # told apart again, for a page
    text = prompt_text(await manager.get_prompt(server, name, arguments))   # a prompt as the message to send

A text resource goes inline, under a `📎 URI (server)` line, in a fence longer than any run of
backticks inside it, so the transcript stays readable Markdown and a reload shows the same: the
note's row of each resource says which lines of the message are its text (`lines`, the first and
one past the last, counted from 0), so nothing is read back out of the text. An image goes to a
model with vision as an image (`sidespin.formats`); the text holds its placeholder.
Every attachment is read at send time; one that cannot be read, or is over the limit, refuses the
whole message with an `AttachmentRefused` naming it. Only what a server offered is read from it: a
URI it lists, or one that fills in one of its templates. Any other (a page may post any server and
URI: `file:///etc/passwd`, a cloud metadata address) is refused by name and never reaches the server.

A resource attached earlier in the `conversation` that its server says has changed since
(`sidespin.mcp.subscriptions`) is read again and goes with the next message the same way, its line
ending `— changed since it was attached` and its row in the note marked `"changed": true`. One that
cannot be read now, or is over the limit, is left out (and stays marked, to be tried with the next).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from loguru import logger

from sidespin.errors import AttachmentRefused, MCPServerError
from sidespin.mcp.catalog import Catalog, PromptMessage, Reading
from sidespin.tools.types import MAX_ATTACHMENT_CHARS

__all__ = [
    "MAX_ATTACHED", "ResourceRef", "Composed", "find_resource", "offers", "expand_template", "template_variables",
    "compose", "attached_blocks", "split_attached", "edited_note", "prompt_text",
]

MAX_ATTACHED = 10  # resources attached to one message
CLIP = "📎"
CHANGED = " — changed since it was attached"
_VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")
_BLOCK = re.compile(r"(?:^|\n\n)" + CLIP + r" (?P<uri>\S+) \((?P<server>[^)\n]*)\)(?P<changed>" + CHANGED + r")?\n"
                    r"(?P<fence>`{3,})\n(?P<body>.*?)\n(?P=fence)(?=\n|$)", re.S)


@dataclass(frozen=True)
class ResourceRef:
    """A resource a person chose: the server that lists it, its URI and the name to show."""

    server: str
    uri: str
    name: str = ""

    def row(self) -> dict[str, str]:
        return {"server": self.server, "uri": self.uri, "name": self.name or self.uri}


@dataclass
class Composed:
    """A message with its resources read: the text the model and the transcript get, and the user turn's note."""

    text: str
    note: dict[str, Any] = field(default_factory=dict)


def template_variables(template: str) -> list[str]:
    """The variables of a URI template (`{resourceId}`), in order, each once."""
    return list(dict.fromkeys(_VARIABLE.findall(template)))


def expand_template(template: str, values: dict[str, str]) -> str:
    """A URI template filled in (RFC 6570 level 1: each value percent-encoded); a missing value is refused."""
    missing = [name for name in template_variables(template) if not str(values.get(name, "")).strip()]
    if missing:
        raise AttachmentRefused(f"fill in {', '.join(missing)} for {template}")
    return _VARIABLE.sub(lambda match: quote(str(values[match.group(1)]).strip(), safe=""), template)


def _matches(template: str, uri: str) -> bool:
    pattern = "".join(r"[^/?#]+" if part.startswith("{") else re.escape(part)
                      for part in re.split(r"(\{[A-Za-z0-9_]+\})", template))
    return re.fullmatch(pattern, uri) is not None


def offers(catalog: Catalog, ref: ResourceRef) -> bool:
    """Whether `ref.server` lists `ref.uri` as a resource, or one of its templates expands to it."""
    return (any(row["server"] == ref.server and row["uri"] == ref.uri for row in catalog.resources)
            or any(row["server"] == ref.server and _matches(row["uriTemplate"], ref.uri) for row in catalog.templates))


async def _not_offered(manager: Any, refs: list[ResourceRef]) -> list[ResourceRef]:
    """The refs their server does not offer; a listing older than the resource is asked for again once."""
    catalog = await manager.catalog()
    missing = [ref for ref in refs if not offers(catalog, ref)]
    if missing:
        fresh = await manager.catalog(fresh=True)
        missing = [ref for ref in missing if not offers(fresh, ref)]
    for ref in missing:
        logger.warning("MCP_RESOURCE_NOT_OFFERED {} {}", ref.server, ref.uri)
    return missing


def find_resource(catalog: Catalog, uri: str) -> ResourceRef:
    """The server that lists `uri` (as a resource, or by one of its templates); unknown URIs are refused."""
    for row in catalog.resources:
        if row["uri"] == uri:
            return ResourceRef(row["server"], uri, row.get("name") or uri)
    for row in catalog.templates:
        if _matches(row["uriTemplate"], uri):
            return ResourceRef(row["server"], uri, uri.rsplit("/", 1)[-1] or uri)
    raise AttachmentRefused(f"no MCP server lists the resource {uri}; `@` alone lists the resources")


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _block(ref: ResourceRef, text: str, changed: bool = False) -> str:
    fence = _fence(text)
    return f"{CLIP} {ref.uri} ({ref.server}){CHANGED if changed else ''}\n{fence}\n{text}\n{fence}"


async def _read(manager: Any, ref: ResourceRef, max_chars: int) -> Reading:
    """One resource read now, within the limits; `AttachmentRefused` says why not."""
    try:
        reading = await manager.read_resource(ref.server, ref.uri)
    except MCPServerError as error:
        raise AttachmentRefused(f"the resource {ref.uri} ({ref.server}) cannot be read: {error}") from None
    if len(reading.text) > max_chars:
        raise AttachmentRefused(f"the resource {ref.uri} has {len(reading.text):,} characters; the limit is "
                                f"{max_chars:,} (max_result_chars)")
    for item in reading.attachments:
        if len(item.get("data") or "") > MAX_ATTACHMENT_CHARS:
            raise AttachmentRefused(f"the resource {ref.uri} holds a {item.get('mimeType')} of "
                                    f"{len(item['data']):,} characters of base64; the limit is "
                                    f"{MAX_ATTACHMENT_CHARS:,}")
    return reading


async def compose(
    manager: Any, typed: str, refs: list[ResourceRef], *, max_chars: int, conversation: str | None = None
) -> Composed:
    """Read every attached resource now and build the message; `AttachmentRefused` names the first that fails.

    `max_chars`: the most text one resource may add (the tool results' `max_result_chars`);
    an image may be up to `MAX_ATTACHMENT_CHARS` of base64, as a tool's. `conversation`: the one the
    message goes to, whose changed resources are added (none without it).
    """
    if len(refs) > MAX_ATTACHED:
        raise AttachmentRefused(f"{len(refs)} resources are attached; at most {MAX_ATTACHED} go with one message")
    if refs and manager is None:
        raise AttachmentRefused("no MCP servers are configured (mcp.json), so no resource can be attached")
    chosen = dict.fromkeys((ref.server, ref.uri) for ref in refs)
    changed = [ref for ref in (manager.subscriptions.changed(conversation) if manager is not None and conversation else [])
               if (ref.server, ref.uri) not in chosen]  # one attached again now is read fresh anyway
    if refs or changed:
        unknown = await _not_offered(manager, [*refs, *changed])
        for ref in refs:
            if ref in unknown:
                raise AttachmentRefused(f"the MCP server {ref.server!r} does not list the resource {ref.uri}; "
                                        "`@` lists the resources")
        changed = [ref for ref in changed if ref not in unknown]  # followed from an old note: left out, never read
    parts, attached, images = [typed.strip()], [], []
    for ref in [*dict.fromkeys(refs), *changed]:  # the same resource twice is read once
        again = ref in changed
        try:
            reading = await _read(manager, ref, max_chars)
        except AttachmentRefused as error:
            if not again:
                raise
            # the person did not attach it to this message and cannot take it off: it is left out, not refused
            logger.warning("MCP_RESOURCE_UPDATE_LEFT_OUT {} {}: {}", ref.server, ref.uri, error)
            continue
        above = "\n\n".join(part for part in parts if part)
        first = above.count("\n") + (2 if above else 0) + 2  # the block's header, its fence, then its text
        parts.append(_block(ref, reading.text, again))
        row = {**ref.row(), **({"changed": True} if again else {})}
        attached.append({**row, "lines": [first, first + reading.text.count("\n") + 1]})
        images += [{**item, "uri": ref.uri} for item in reading.attachments if item.get("type") == "image"]
    note: dict[str, Any] = {"attached": attached} if attached else {}
    if images:
        note["attachments"] = images
    return Composed("\n\n".join(part for part in parts if part), note)


def attached_blocks(text: str, note: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """A user message `compose` wrote, told apart by its `note`: the typed text, and each attached resource's
    uri, server, name, body and whether it was sent again because it `changed`. A note written before its rows
    kept their `lines`, or lines a hand edit has moved since, leave the text to `split_attached`."""
    rows = [row for row in note.get("attached") or [] if isinstance(row, dict)]
    lines = text.split("\n")
    if not rows or not all(_holds(lines, row.get("lines")) for row in rows):
        typed, found = split_attached(text)
        names = {row.get("uri"): row.get("name") for row in rows}
        return typed, [{"uri": block["uri"], "server": block["server"], "name": names.get(block["uri"]) or block["uri"],
                        "changed": block["changed"], "body": block["body"]} for block in found]
    blocks = [{"uri": str(row.get("uri", "")), "server": str(row.get("server", "")),
               "name": str(row.get("name") or row.get("uri", "")), "changed": row.get("changed") is True,
               "body": "\n".join(lines[row["lines"][0]:row["lines"][1]])} for row in rows]
    return "\n".join(lines[: min(row["lines"][0] for row in rows) - 2]).strip(), blocks


def _holds(lines: list[str], span: Any) -> bool:
    """Whether `span` is a row's `lines` that still frame a block: its header and fence before, the fence after."""
    if not (isinstance(span, list) and len(span) == 2 and all(isinstance(n, int) and not isinstance(n, bool)
                                                              for n in span)):
        return False
    first, end = span
    return (2 <= first <= end < len(lines) and lines[first - 2].startswith(CLIP + " ")
            and lines[first - 1].startswith("```") and lines[end] == lines[first - 1])


def split_attached(text: str) -> tuple[str, list[dict[str, Any]]]:
    """A user message as `compose` writes it, read from its text alone (a message written before its note kept
    the lines of each block, or an edit a person typed): the typed text, and each attached block's uri, server,
    body, whether it was sent again because it `changed`, and its `lines`."""
    blocks = [{**match.groupdict(), "changed": bool(match["changed"]), "lines": _lines(text, match)}
              for match in _BLOCK.finditer(text)]
    first = _BLOCK.search(text)
    return (text[: first.start()] if first else text).strip(), blocks


def _lines(text: str, match: re.Match[str]) -> list[int]:
    first = text.count("\n", 0, match.start("body"))
    return [first, first + match["body"].count("\n") + 1]


def edited_note(note: dict[str, Any], text: str) -> dict[str, Any]:
    """The user turn's note for `text`, an edit of a message that had `note`: the resources whose block the
    edit kept (and their images), each with the lines its text has now; none are added, so an edit cannot
    attach what was never read."""
    blocks = split_attached(text)[1]
    where = {(block["server"], block["uri"]): block["lines"] for block in reversed(blocks)}  # the first, if twice
    kept = {block["uri"] for block in blocks}
    attached = [{**row, "lines": where[row["server"], row["uri"]]} for row in note.get("attached") or []
                if isinstance(row, dict) and (row.get("server"), row.get("uri")) in where]
    # an image from a note written before images named their resource is kept while any block is
    images = [item for item in note.get("attachments") or []
              if isinstance(item, dict) and (item["uri"] in kept if "uri" in item else bool(kept))]
    edited: dict[str, Any] = {"attached": attached} if attached else {}
    if attached and images:
        edited["attachments"] = images
    return edited


def prompt_text(messages: list[PromptMessage]) -> str:
    """A rendered prompt as the text of one message to send.

    A prompt of user messages only is their text, a blank line between; one that also holds
    assistant messages is written as a dialogue, each message under its role ("User:", "Assistant:").
    Images and audio are their placeholders; an embedded resource is its text.
    """
    if all(message.role == "user" for message in messages):
        return "\n\n".join(message.text for message in messages if message.text).strip()
    return "\n\n".join(f"{message.role.capitalize()}: {message.text}" for message in messages).strip()
