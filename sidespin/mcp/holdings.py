"""What a connected server holds, by name: read from its listing tools, for the tool-use decision.

A request for a server's things often shares no word with its tools: "How many customers live in Lyon?" with a
database server whose tools say "Execute a SELECT query". The server's own listing says it holds `customers`.

A listing tool (`listing_tools`) takes no required argument, is not marked destructive, and has "list" among its
name's words (`list_tables`, `list_notes`; at most `MAX_LISTINGS` a server). sidespin calls it with no arguments when
the server becomes ready, and again after a call of one of the server's tools that is not read-only, but only where
the approval policy would run that call without asking (`may_run`: the tool is marked read-only, or the policy is
`auto`; `"tools": {"list_tables": {"approval": "ask"}}` in config.json stops it). Each call is logged
(`MCP_HOLDINGS`); a failure or a timeout leaves the server's holdings as they were.

`names_in` reads the names a listing gives: the strings of a JSON or Python literal (of its records, the fields
whose key says name, title, subject or text where they have one), else the lines, less their bullets and bracketed
tags; names over `MAX_NAME` characters, paths, headings, sentences and identifiers (dates, times, hexadecimal ids,
numbers) are left out, and `MAX_NAMES` are kept. Each of the server's tools carries them (`Tool.holds`): relevance
ranks them with the tool's words, and the decision's prompt says "It holds …" after the description. Nothing else
of the result reaches a prompt.
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
from typing import Any, Awaitable, Callable, Sequence

from loguru import logger

from sidespin.tools import Tool
from sidespin.tooluse.values import words_of

__all__ = ["listing_tools", "names_in", "read_holdings", "MAX_NAMES", "MAX_NAME", "MAX_LISTINGS", "TIMEOUT"]

MAX_NAMES = 30  # names kept a server
MAX_NAME = 40  # characters of a name at most
MAX_LISTINGS = 3  # listing tools called a server
TIMEOUT = 10.0  # seconds a listing may take
_READ = 20_000  # characters of a listing read
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_TAGS = re.compile(r"(?:\s*(?:[\[(][^\])]*[\])]|(?<=\s)\d{4}-\d\d-\d\d[\dT:.Z+-]*))+\s*$")  # trailing tags, dates
_NAMING = re.compile(r"(?i)^(?:\w+[_ ])?(?:name|title|label|subject|text)$")  # a record's field that names it
_IDENTIFIER = re.compile(r"(?i)^(?:[\W\d_]*|[\da-f]{8,}(?:-[\da-f]+)*|\d{4}-\d\d-\d\d(?:\b|T).*)$")


def listing_tools(tools: Sequence[Tool]) -> list[Tool]:
    """The tools of one server that list what it holds: no required argument, not destructive, "list" in the name."""
    return [t for t in tools if not t.required and not t.destructive and "list" in words_of(t.name)][:MAX_LISTINGS]


def names_in(text: str) -> tuple[str, ...]:
    """The names a listing's text gives, in order, each once (see the module docstring)."""
    text = text[:_READ]
    try:
        value: Any = json.loads(text)
    except (ValueError, RecursionError):
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = None
    found = _strings(value) if isinstance(value, (list, dict)) else [
        _TAGS.sub("", _BULLET.sub("", line)).strip() for line in text.splitlines()]
    kept = [n for n in found if n and len(n) <= MAX_NAME and "/" not in n and "\\" not in n
            and not n.endswith((":", ".")) and not _IDENTIFIER.match(n)]
    return tuple(dict.fromkeys(kept))[:MAX_NAMES]


def _strings(value: Any, depth: int = 0, listed: bool = False) -> list[str]:
    """The string values in a literal, depth first, to a depth of 8 (keys are not names); of a record in a list
    with a field whose key says name, title, subject or text, that field's."""
    if isinstance(value, str):
        return [value.strip()]
    naming = [v for k, v in value.items() if _NAMING.match(str(k)) and isinstance(v, str)] if listed and isinstance(
        value, dict) else []
    items = naming or (value.values() if isinstance(value, dict) else value if isinstance(value, list) else [])
    return [s for item in items for s in _strings(item, depth + 1, isinstance(value, list))] if depth < 8 else []


async def read_holdings(server: str, tools: Sequence[Tool], may_run: Callable[[Tool], bool],
                        call: Callable[[Tool], Awaitable[Any]]) -> tuple[str, ...] | None:
    """The names `server` holds, read by calling (`call(tool)` with no arguments, giving a `ToolResult`) each of
    its listing tools that `may_run`; None where none may run or every listing failed."""
    names: list[str] = []
    read = False
    for tool in listing_tools(tools):
        if not may_run(tool):
            logger.info("MCP_HOLDINGS {} {} not read: it would need a person's approval", server, tool.name)
            continue
        try:
            result = await asyncio.wait_for(call(tool), TIMEOUT)
        except Exception as error:  # a listing that fails or hangs leaves the holdings as they were
            logger.warning("MCP_HOLDINGS {} {} failed: {}", server, tool.name, error)
            continue
        if getattr(result, "error", None) is not None or not isinstance(getattr(result, "output", None), str):
            logger.warning("MCP_HOLDINGS {} {} gave no text", server, tool.name)
            continue
        read = True
        names.extend(names_in(result.output))
    if not read:
        return None
    holds = tuple(dict.fromkeys(names))[:MAX_NAMES]
    logger.info("MCP_HOLDINGS {} holds {} name(s): {}", server, len(holds), ", ".join(holds)[:300])
    return holds
