"""MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865) as sidespin reads them.

    resource_uri(tool)          # the `ui://` resource a listed tool draws its results with, or None
    for_model(tool), for_app(tool)   # its `_meta.ui.visibility` (both, when it says nothing)
    shelf = AppShelf(folder)    # the apps drawn so far, by the sha256 of what the server gave
    view = shelf.keep(server, tool, uri, read_result)   # -> AppView, written once under folder/<sha>.json
    shelf.get(sha)              # -> the AppView a transcript's attachment names, or None
    view.attachment()           # {"type": "app", "server", "tool", "uri", "sha"}: what a result carries
    sandbox_csp(view.csp, page_origin)   # the Content-Security-Policy the sandbox page and its app run under
    context_prompt(system_prompt, transcript.meta.get(APP_CONTEXT))   # what apps told the model, after the prompt

The HTML a server gives is kept on the shelf as it was drawn, so a conversation reloaded draws the
same app again from its transcript without asking the server (nor ever calling the tool again).
A domain the server declares for its CSP is kept only if it is a plain origin (a scheme, a host
that may start with `*.`, a port); anything else (a quote, a `;`, a keyword) is dropped and logged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from loguru import logger

from sidespin.errors import MCPServerError

__all__ = [
    "APP_CONTEXT", "APP_MIME_TYPE", "EXTENSION", "MAX_APP_BYTES", "AppShelf", "AppView", "clean_csp", "context_prompt", "context_text", "for_app", "for_model",
    "resource_uri", "sandbox_csp",
]

EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
MAX_APP_BYTES = 8 * 1024 * 1024
"""The largest app HTML drawn (the example servers' are 0.2 to 4.3 MB)."""

CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_MAX_DOMAINS = 32
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?/?$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


def _ui_meta(tool: types.Tool) -> dict[str, Any]:
    meta = tool.meta or {}
    ui = meta.get("ui")
    return ui if isinstance(ui, dict) else {}


def resource_uri(tool: types.Tool) -> str | None:
    """The `ui://` resource a tool's results are drawn with: `_meta.ui.resourceUri`, or the deprecated flat
    `_meta["ui/resourceUri"]`; None when it names none (or names something that is not `ui://`)."""
    uri = _ui_meta(tool).get("resourceUri") or (tool.meta or {}).get("ui/resourceUri")
    return uri if isinstance(uri, str) and uri.startswith("ui://") else None


def _visibility(tool: types.Tool) -> set[str]:
    seen = _ui_meta(tool).get("visibility")
    if not isinstance(seen, list):
        return {"model", "app"}
    return {item for item in seen if isinstance(item, str)}


def for_model(tool: types.Tool) -> bool:
    """Whether the model is offered this tool (its visibility names "model", or says nothing)."""
    return "model" in _visibility(tool)


def for_app(tool: types.Tool) -> bool:
    """Whether an app of the same server may call this tool (its visibility names "app", or says nothing)."""
    return "app" in _visibility(tool)


def clean_csp(declared: Any, *, where: str = "") -> dict[str, list[str]]:
    """The domains a resource's `_meta.ui.csp` declares, each list keeping only plain origins (at most 32)."""
    kept: dict[str, list[str]] = {}
    if not isinstance(declared, dict):
        return kept
    for key in CSP_KEYS:
        values = declared.get(key)
        if not isinstance(values, list):
            continue
        good = [value.rstrip("/") for value in values if isinstance(value, str) and _ORIGIN.match(value)]
        dropped = [value for value in values if not (isinstance(value, str) and _ORIGIN.match(value))]
        if dropped:
            logger.warning("APP_CSP_DROPPED {} {}: {!r} is not a plain origin", where, key, dropped[:3])
        if good:
            kept[key] = good[:_MAX_DOMAINS]
    return kept


def sandbox_csp(csp: dict[str, list[str]], page_origin: str) -> str:
    """The policy an app runs under: nothing from outside but the domains its server declared
    (`clean_csp`); no plugins, no forms sent anywhere; framed only by the chat page at `page_origin`."""
    def domains(key: str) -> str:
        return " ".join(csp.get(key, []))

    resources = domains("resourceDomains")
    connect = domains("connectDomains") or "'none'"
    return "; ".join(part.strip() for part in (
        "default-src 'none'",
        f"script-src 'self' 'unsafe-inline' {resources}",
        f"style-src 'self' 'unsafe-inline' {resources}",
        f"img-src 'self' data: blob: {resources}",
        f"font-src 'self' data: {resources}",
        f"media-src 'self' data: blob: {resources}",
        f"connect-src {connect}",
        f"worker-src blob: {resources}",
        f"frame-src {domains('frameDomains') or chr(39) + 'none' + chr(39)}",
        "object-src 'none'",
        f"base-uri {domains('baseUriDomains') or chr(39) + 'self' + chr(39)}",
        "form-action 'none'",
        f"frame-ancestors 'self' {page_origin}",  # the page, and the sandbox page for the app inside it
    ))


@dataclass
class AppView:
    """One app as drawn: which server and tool gave it, its HTML, and what its resource's `_meta.ui` says."""

    server: str
    tool: str
    uri: str
    html: str
    csp: dict[str, list[str]] = field(default_factory=dict)
    permissions: dict[str, Any] = field(default_factory=dict)
    prefers_border: bool | None = None
    sha: str = ""

    def attachment(self) -> dict[str, Any]:
        """What a tool result carries to say it has this app (the transcript keeps it in the result's note)."""
        return {"type": "app", "server": self.server, "tool": self.tool, "uri": self.uri, "sha": self.sha}


def _html_of(contents: types.TextResourceContents | types.BlobResourceContents, uri: str) -> str:
    if isinstance(contents, types.TextResourceContents):
        return contents.text
    try:
        return base64.b64decode(contents.blob, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as error:
        raise MCPServerError(f"the app {uri} is not base64 UTF-8 HTML ({error})") from None


def read_view(server: str, tool: str, uri: str, result: types.ReadResourceResult) -> AppView:
    """The app a `resources/read` of `uri` gave; `MCPServerError` when it holds no HTML app or a too large one."""
    found = next((item for item in result.contents if str(item.uri) == uri), None) or (
        result.contents[0] if result.contents else None)
    if found is None:
        raise MCPServerError(f"MCP server {server!r} gave nothing for the app {uri}")
    mime = (found.mime_type or "").replace(" ", "").lower()
    if not mime.startswith("text/html"):
        raise MCPServerError(f"the app {uri} of {server!r} is {found.mime_type!r}, not {APP_MIME_TYPE}")
    html = _html_of(found, uri)
    if len(html.encode("utf-8")) > MAX_APP_BYTES:
        raise MCPServerError(f"the app {uri} of {server!r} is larger than {MAX_APP_BYTES:,} bytes; it is not drawn")
    ui = (found.meta or {}).get("ui")
    ui = ui if isinstance(ui, dict) else {}
    permissions = ui.get("permissions") if isinstance(ui.get("permissions"), dict) else {}
    border = ui.get("prefersBorder")
    return AppView(server, tool, uri, html, clean_csp(ui.get("csp"), where=f"{server} {uri}"), permissions,
                   border if isinstance(border, bool) else None)


class AppShelf:
    """The apps drawn so far, one file each (`<folder>/<sha256>.json`), named by what they hold: a file is
    written once and never changed, so the sha a transcript keeps always names the app that was drawn."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def keep(self, view: AppView) -> AppView:
        """Put `view` on the shelf (once); the same view with its `sha`."""
        record = {key: value for key, value in asdict(view).items() if key != "sha"}
        text = json.dumps(record, ensure_ascii=False, sort_keys=True)
        view.sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        path = self.folder / f"{view.sha}.json"
        if not path.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=self.folder, delete=False,
                                             suffix=".tmp") as file:
                file.write(text)
            os.replace(file.name, path)
            logger.info("APP_KEPT {} {} {} sha={} csp={}", view.server, view.tool, view.uri, view.sha[:12],
                        json.dumps(view.csp) if view.csp else "none")
        return view

    def get(self, sha: str) -> AppView | None:
        """The app kept under `sha`, or None (no such file, or not one this shelf wrote)."""
        if not isinstance(sha, str) or not _SHA.match(sha):
            return None
        path = self.folder / f"{sha}.json"
        if path.is_symlink() or not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            view = AppView(**{key: data[key] for key in ("server", "tool", "uri", "html")},
                           csp=clean_csp(data.get("csp")), permissions=data.get("permissions") or {},
                           prefers_border=data.get("prefers_border"))
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.warning("APP_UNREADABLE {}: {}", path, error)
            return None
        view.sha = sha
        return view


APP_CONTEXT = "app_context"
"""The transcript note (before the first message) holding what each app last asked the model to know
(`ui/update-model-context`): {call id: {"server", "tool", "text"}}; each update replaces its app's."""
MAX_CONTEXT_CHARS = 4000  # one app's context, as the model reads it


def context_text(content: Any, structured: Any) -> str:
    """What an app's `ui/update-model-context` says, as text: its text blocks, then its structured content
    as JSON, cut to `MAX_CONTEXT_CHARS` with a note. Blocks that are not text are named, not sent."""
    parts: list[str] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict):
            parts.append(f"[{str(block.get('type') or 'content')[:20]} left out]")
    if structured is not None:
        try:
            parts.append(json.dumps(structured, ensure_ascii=False, default=str))
        except (TypeError, ValueError, RecursionError):
            parts.append("[structured content that is not JSON left out]")
    text = "\n".join(parts).strip()
    if len(text) > MAX_CONTEXT_CHARS:
        text = text[:MAX_CONTEXT_CHARS] + f"\n… [cut: {len(text) - MAX_CONTEXT_CHARS:,} more characters]"
    return text


def context_prompt(system_prompt: str, contexts: Any) -> str:
    """`system_prompt` with what the conversation's apps asked the model to know (an `APP_CONTEXT` note)
    after it; the same prompt when they asked nothing."""
    if not isinstance(contexts, dict):
        return system_prompt
    lines = [f"[app of the tool {entry.get('tool')!s} ({entry.get('server')!s}), call {call_id}]\n{entry['text']}"
             for call_id, entry in contexts.items()
             if isinstance(entry, dict) and isinstance(entry.get("text"), str) and entry["text"].strip()]
    if not lines:
        return system_prompt
    said = "What the apps drawn in this conversation tell you (each replaces what it said before):\n\n"
    return "\n\n".join(part for part in (system_prompt.strip(), said + "\n\n".join(lines)) if part)
