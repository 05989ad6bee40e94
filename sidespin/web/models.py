"""The model of a conversation on the page: the picker in the chat's header, and under each answer its meter —
the load bar while the conversation's model starts, then the tokens the answer cost.

The meter is drawn from the turn's record alone (`TurnRecord.loading`, `TurnRecord.usage`), so a
reloaded answer shows the same line as it did live. Routes: `POST /model` (`cid`, `model`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fasthtml.common import APIRouter, Div, Label, Option, Progress, Select, Span
from loguru import logger
from starlette.exceptions import HTTPException
from starlette.requests import Request

from sidespin.errors import TranscriptError
from sidespin.record import TurnRecord

if TYPE_CHECKING:
    from sidespin.engine import Engine

__all__ = ["ModelPicker", "TurnMeter", "meter_state", "ar"]

ar = APIRouter()


def ModelPicker(engine: "Engine", cid: str, chosen: str | None = None):
    """Which model answers this conversation: a choice when several are configured, else the model's name."""
    names = engine.pool.names()
    chosen = chosen or engine.pool.choose(engine.store.load(cid).meta.get("model"))
    if len(names) < 2:
        return Span(chosen, cls="model", id="model-picker")
    return Label(
        Span("model", cls="k"),
        Select(*[Option(name, value=name, selected=name == chosen) for name in names],
               name="model", hx_post=pick_model.to(), hx_vals=json.dumps({"cid": cid}), hx_trigger="change",
               hx_target="#model-picker", hx_swap="outerHTML", title="the model that answers this conversation"),
        cls="model picker", id="model-picker",
    )


def TurnMeter(record: TurnRecord, turn_id: str, **kwargs: Any):
    """Under an answer: a bar while its model loads (elapsed seconds; no backend tells how far), then its usage."""
    parts: list[Any] = []
    if record.loading is not None:
        loading = record.loading
        parts = [Progress(title="no percentage is known: the bar only shows that the load goes on"),
                 Span(f"loading model {loading.model}… {loading.seconds:.0f} s", cls="loading-text")]
    elif record.usage is not None:
        usage = record.usage
        parts = [Span(usage.line(), cls="usage-text")]
        if usage.window:
            parts.insert(0, Progress(value=str(usage.context), max=str(usage.window), cls="context",
                                     title=f"context: {usage.context:,} of {usage.window:,} tokens"))
    state = "loading" if record.loading is not None else "usage" if record.usage is not None else "none"
    return Div(*parts, cls="meter", id=f"{turn_id}-meter", data_state=state, **kwargs)


def meter_state(record: TurnRecord) -> tuple[Any, ...]:
    """What the meter shows, to tell whether a watcher must be sent it again."""
    loading = (record.loading.model, round(record.loading.seconds)) if record.loading is not None else None
    return loading, record.usage


@ar("/model", methods=["post"])
async def pick_model(request: Request, cid: str = "", model: str = ""):
    """Pick the model that answers a conversation from its next message on (kept in its transcript)."""
    for name, value in (("cid", cid), ("model", model)):
        if not isinstance(value, str) or not value:
            raise HTTPException(400, f"the field {name!r} must be non-empty text")
    engine: Engine = request.app.state.engine
    if model not in engine.pool.names():
        raise HTTPException(400, f"no model named {model!r}; the models are {', '.join(engine.pool.names())}")
    try:
        transcript = engine.store.load(cid)
    except TranscriptError as error:
        raise HTTPException(404, str(error)) from None
    transcript.set_meta("model", model)
    engine.store.save(cid, transcript)
    logger.info("MODEL_PICKED conv={} {}", cid, model)
    return ModelPicker(engine, cid, model)
