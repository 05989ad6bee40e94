"""`@` and `/` in the composer: resources attached as chips, prompts rendered into the textarea.

Typing `@` lists every server's resources and templates, `/` at the start of an empty composer
every server's prompts (static/composer.js asks these routes as the person types):

    GET  /composer/resources?q=…         the matching resources and templates (at most MAX_MATCHES)
    GET  /composer/prompts?q=…           the matching prompts
    GET  /composer/template_form?…       a template's variables, one field each
    GET  /composer/prompt_form?…         a prompt's arguments, one field each (required marked)
    POST /composer/chip                  server, uri, name (or template, values): the chip to show
    POST /composer/prompt                server, name, arguments: {"text": …} for the textarea, or {"error": …}

A chip carries its resource as a hidden `attach` input; `/send` reads every attached resource
(`sidespin.mcp.attach.compose`). The routes are `ar`'s, under /composer.
"""

from __future__ import annotations

import json
from typing import Any

from fasthtml.common import (
    APIRouter, Button, Div, Hidden, Input, Label, Li, Span, Strong, Ul,
)
from loguru import logger
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from sidespin.errors import AttachmentRefused, MCPServerError
from sidespin.mcp.attach import (
    Composed, ResourceRef, compose, expand_template, prompt_text, template_variables,
)
from sidespin.mcp.catalog import Catalog
from sidespin.web.forms import refusal

__all__ = ["Chip", "ChangedNotice", "ComposerParts", "message_of", "ar"]

MAX_MATCHES = 50
MAX_QUERY_CHARS = 200

ar = APIRouter(prefix="/composer")


# ---------------------------------------------------------------- components

def ComposerParts():
    """What the composer holds besides the textarea: the chips, the `@`/`/` list, a small form, an error line."""
    return (
        Div(id="chips", cls="chips", aria_label="attached resources"),
        Div(id="composer-menu", cls="composer-menu", role="listbox", hidden=True),
        Div(id="composer-panel", cls="composer-panel", hidden=True),
        Div(id="composer-error", cls="composer-error", role="alert"),
        ChangedNotice([]),
    )


def ChangedNotice(changed: list[ResourceRef], **kwargs: Any):
    """One line above the textarea per attached resource that changed on its server since it was sent
    (the Servers panel's live stream redraws it, `hx_swap_oob`)."""
    return Div(*[Div(Span("📎", cls="icon"), Span(ref.name or ref.uri, cls="chip-name", title=ref.uri),
                     " changed — it will be sent again with your next message", cls="notice-line",
                     data_uri=ref.uri, data_server=ref.server)
                 for ref in changed],
               id="resource-notice", cls="resource-notice", role="status", **kwargs)


def Chip(ref: ResourceRef):
    """An attached resource above the textarea: its name and server; × takes it off the message."""
    return Span(Span("📎", cls="icon"), Span(ref.name or ref.uri, cls="chip-name"), Span(ref.server, cls="chip-server"),
                Button("×", type="button", cls="chip-remove", title=f"remove {ref.name or ref.uri}"),
                Hidden(name="attach", value=json.dumps(ref.row(), ensure_ascii=False)),
                cls="chip", data_uri=ref.uri, title=ref.uri)


def _matches(row: dict[str, Any], query: str) -> bool:
    words = " ".join(str(row.get(key) or "") for key in ("name", "uri", "uriTemplate", "server", "description"))
    return query.lower() in words.lower()


def Menu(items: list[Any], problems: list[str], empty: str):
    rows = items[:MAX_MATCHES] or [Li(empty, cls="menu-empty")]
    more = [Li(f"… {len(items) - MAX_MATCHES} more: type to narrow", cls="menu-more")] if len(items) > MAX_MATCHES else []
    return Ul(*rows, *more, *[Li(f"⚠️ {problem}", cls="menu-problem") for problem in problems], cls="menu-list")


def ResourceItem(row: dict[str, Any]):
    template = row.get("uriTemplate")
    return Li(Span(row.get("name") or row.get("uri") or template, cls="item-name"),
              Span(row["server"], cls="item-server"),
              Span(template or row.get("uri"), cls="item-detail"),
              cls="menu-item", role="option", title=row.get("description") or "",
              data_kind="template" if template else "resource", data_server=row["server"],
              data_name=row.get("name") or "", **({"data_template": template} if template else {"data_uri": row["uri"]}))


def PromptItem(row: dict[str, Any]):
    arguments = row.get("arguments") or []
    return Li(Span("/" + row["name"], cls="item-name"), Span(row["server"], cls="item-server"),
              Span(row.get("description") or "", cls="item-detail"),
              cls="menu-item", role="option", data_kind="prompt", data_server=row["server"], data_name=row["name"],
              data_args=str(len(arguments)))


def _field(name: str, *, required: bool, hint: str | None):
    mark = Strong("*", cls="required", title="required") if required else ""
    return Label(Span(name, mark, cls="field-name"),
                 Input(data_field=name, type="text", required=required, placeholder=hint or "", title=hint or name),
                 cls="panel-field")


def PanelForm(title: str, fields: list[Any], action: str, data: dict[str, str], button: str):
    """A small form in the composer; its inputs have no name, so `/send` never carries them (composer.js does)."""
    return Div(Div(title, cls="panel-title"), *fields,
               Div(Button(button, type="button", cls="panel-submit"), Button("Cancel", type="button", cls="panel-cancel"),
                   cls="panel-actions"),
               Div(cls="panel-error", role="alert"),
               cls="panel-form", data_action=action, **{f"data_{key}": value for key, value in data.items()})


# ---------------------------------------------------------------- the message a send carries

def attached_refs(values: list[Any]) -> list[ResourceRef]:
    """The chips' hidden `attach` inputs as resources; anything else is a 400 naming the field."""
    refs = []
    for value in values:
        try:
            row = json.loads(value) if isinstance(value, str) else None
            refs.append(ResourceRef(str(row["server"]), str(row["uri"]), str(row.get("name") or "")))
        except (ValueError, TypeError, KeyError):
            raise HTTPException(400, 'an "attach" field holds {"server", "uri", "name"} as JSON') from None
    return refs


async def message_of(request: Request, typed: str, cid: str) -> Composed:
    """The message `/send` sends to conversation `cid`: the typed text with each attached resource read now,
    and those attached earlier that changed since (`AttachmentRefused`)."""
    form = await request.form()
    engine = request.app.state.engine
    refs = attached_refs(form.getlist("attach"))
    composed = await compose(engine.mcp, typed, refs, max_chars=engine.settings.max_result_chars, conversation=cid)
    if refs:
        logger.info("MESSAGE_ATTACHED {} resources: {}", len(refs), " ".join(ref.uri for ref in refs))
    return composed


# ---------------------------------------------------------------- routes

async def _catalog(request: Request) -> Catalog:
    manager = request.app.state.engine.mcp
    return await manager.catalog() if manager is not None else Catalog(problems=["no MCP servers are configured"])


def _query(q: Any) -> str:
    if not isinstance(q, str):
        raise HTTPException(400, "the query must be text")
    return q.strip()[:MAX_QUERY_CHARS]


@ar("/resources", methods=["get"])
async def composer_resources(request: Request, q: str = ""):
    catalog, query = await _catalog(request), _query(q)
    rows = [row for row in catalog.resources + catalog.templates if _matches(row, query)]
    return Menu([ResourceItem(row) for row in rows], catalog.problems, "no resource matches")


@ar("/prompts", methods=["get"])
async def composer_prompts(request: Request, q: str = ""):
    catalog, query = await _catalog(request), _query(q)
    rows = [row for row in catalog.prompts if _matches(row, query)]
    return Menu([PromptItem(row) for row in rows], catalog.problems, "no prompt matches")


@ar("/template_form", methods=["get"])
async def composer_template_form(server: str, template: str, name: str = ""):
    fields = [_field(variable, required=True, hint=None) for variable in template_variables(template)]
    return PanelForm(f"📎 {name or template} · {server}", fields, composer_chip.to(),
                     {"server": server, "template": template, "name": name}, "Attach")


@ar("/prompt_form", methods=["get"])
async def composer_prompt_form(request: Request, server: str, name: str):
    catalog = await _catalog(request)
    row = next((row for row in catalog.prompts if row["server"] == server and row["name"] == name), None)
    if row is None:
        return Div(f"no prompt {name!r} on {server!r} now", cls="panel-error", role="alert")
    fields = [_field(a["name"], required=a["required"], hint=a.get("description")) for a in row["arguments"]]
    return PanelForm(f"/{name} · {server}", fields, composer_prompt.to(), {"server": server, "name": name,
                     "args": str(len(fields))}, "Insert")


@ar("/chip", methods=["post"])
async def composer_chip(server: str, name: str = "", uri: str = "", template: str = "", values: str = ""):
    try:
        if template:
            filled = json.loads(values or "{}")
            uri = expand_template(template, filled if isinstance(filled, dict) else {})
            name = uri.rsplit("/", 1)[-1] or uri
    except (AttachmentRefused, ValueError) as error:
        return refusal(str(error))
    if not uri:
        return refusal("a chip needs a resource URI")
    return Chip(ResourceRef(server, uri, name))


@ar("/prompt", methods=["post"])
async def composer_prompt(request: Request, server: str, name: str, arguments: str = ""):
    """The prompt rendered with its arguments, as the text to put in the textarea; a refusal says why."""
    try:
        filled = json.loads(arguments or "{}")
        if not isinstance(filled, dict):
            raise ValueError("arguments must be a JSON object")
        manager = request.app.state.engine.mcp
        if manager is None:
            raise MCPServerError("no MCP servers are configured")
        messages = await manager.get_prompt(server, name, {str(k): str(v) for k, v in filled.items() if str(v)})
    except (MCPServerError, ValueError) as error:
        logger.info("PROMPT_REFUSED {} {}: {}", server, name, error)
        return refusal(str(error))
    logger.info("PROMPT_RENDERED {} {} messages={}", server, name, len(messages))
    return JSONResponse({"status": "success", "text": prompt_text(messages)})

