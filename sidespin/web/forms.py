"""How every route refuses what it cannot take: a form field that is not text, and a refusal as JSON.

The app answers a raised `HTTPException` with the same JSON (`server.http_error`); a route returns
`refusal(...)` where FastHTML would draw a page of its own (a 404) or where it goes on after refusing.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

__all__ = ["refusal", "text_fields"]


def text_fields(**fields: Any) -> list[str]:
    """The values of form fields that must be text (absent: empty); a file sent in their place is a 400."""
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise HTTPException(400, f"the field {name!r} must be text, not {type(value).__name__}")
    return [value or "" for value in fields.values()]


def refusal(message: str, status: int = 400) -> JSONResponse:
    """`{"status": "error", "error": message}` with its status, as every refusal of the app is given."""
    return JSONResponse({"status": "error", "error": message}, status_code=status)
