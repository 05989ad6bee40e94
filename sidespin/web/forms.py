"""What the routes take from a request, and how they refuse what they cannot take.

A form field that is not text, a body or a field that is not the JSON it should be, a conversation
that is not there: each becomes a refusal as JSON with a reason. The app answers a raised
`HTTPException` with the same JSON (`sidespin.web.app.http_error`); a route returns `refusal(...)`
where FastHTML would draw a page of its own (a 404) or where it goes on after refusing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from sidespin.errors import TranscriptError

if TYPE_CHECKING:
    from sidespin.engine import Engine
    from sidespin.rally import Conversation
    from sidespin.web.live import TurnBoard

__all__ = ["refusal", "text_fields", "json_body", "json_object", "find_conversation", "engine_of", "board_of"]


def engine_of(request: Request) -> "Engine":
    return request.app.state.engine


def board_of(request: Request) -> "TurnBoard":
    return request.app.state.board


def text_fields(**fields: Any) -> list[str]:
    """The values of form fields that must be text (absent: empty); a file sent in their place is a 400."""
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise HTTPException(400, f"the field {name!r} must be text, not {type(value).__name__}")
    return [value or "" for value in fields.values()]


def json_body(raw: bytes) -> Any:
    """A request body as JSON; anything unreadable (bad UTF-8, bad JSON, nesting too deep) is a 400."""
    try:
        return json.loads(raw or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise HTTPException(400, f"the body is not valid JSON: {error}") from None
    except RecursionError:
        raise HTTPException(400, "the JSON is nested too deeply") from None


def json_object(text: str, what: str) -> dict[str, Any] | None:
    """A form field holding a JSON object (or nothing)."""
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise HTTPException(400, f"{what} are not valid JSON: {error}") from None
    except RecursionError:
        raise HTTPException(400, f"{what} are nested too deeply") from None
    if not isinstance(value, dict):
        raise HTTPException(400, f"{what} must be a JSON object like {{\"name\": \"World\"}}, not {type(value).__name__}")
    return value


def find_conversation(engine: "Engine", cid: str) -> tuple["Conversation | None", JSONResponse | None]:
    """The conversation, or the 404 a person can act on."""
    try:
        return engine.conversation(cid), None
    except TranscriptError as error:
        return None, refusal(str(error), 404)


def refusal(message: str, status: int = 400) -> JSONResponse:
    """`{"status": "error", "error": message}` with its status, as every refusal of the app is given."""
    return JSONResponse({"status": "error", "error": message}, status_code=status)
