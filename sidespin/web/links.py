"""The address of a conversation's page, for the parts the page is drawn from.

The page's route (`sidespin.web.chat.chat`) is declared at `CHAT_PATH`; the sidebar, the version
links and the redirects after a fork or an import sit below it and link to it with `chat_link`,
the same URL its route's `.to()` makes.
"""

from __future__ import annotations

from typing import Any

from fasthtml.common import qp

__all__ = ["CHAT_PATH", "chat_link"]

CHAT_PATH = "/c/{cid}"


def chat_link(cid: str, **query: Any) -> str:
    """The page of conversation `cid`, e.g. `/c/{cid}?start=200` for `start=200`."""
    return qp(CHAT_PATH, cid=cid, **query)
