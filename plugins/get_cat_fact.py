"""A random cat fact: the seed's Poke tool, with server-side formatting.

Facts come from the offline dataset `data/cat_facts.json`; the live catfact
API is tried only when SIDESPIN_ONLINE=1, and the dataset answers if it fails.
"""

from __future__ import annotations

import json
import os
import random
from functools import lru_cache
from pathlib import Path

import aiohttp
from loguru import logger

from sidespin.tools import tool

CATFACT_URL = "https://catfact.ninja/fact"
_DATASET = Path(__file__).resolve().parent.parent / "data" / "cat_facts.json"


@lru_cache(maxsize=1)
def _facts() -> tuple[str, ...]:
    return tuple(json.loads(_DATASET.read_text(encoding="utf-8")))


class _Shuffle:
    """Deals facts in a shuffled order so consecutive pokes never repeat one until all were shown."""

    def __init__(self) -> None:
        self._deck: list[int] = []

    def next(self) -> int:
        if not self._deck:
            self._deck = random.sample(range(len(_facts())), len(_facts()))
        return self._deck.pop()


_deck = _Shuffle()


async def _live_fact() -> str | None:
    timeout = aiohttp.ClientTimeout(total=5)
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session:
            async with session.get(CATFACT_URL) as response:
                response.raise_for_status()
                return (await response.json())["fact"]
    except (aiohttp.ClientError, TimeoutError, KeyError, ValueError) as error:
        logger.warning("CAT_FACT_LIVE_FAILED {}: using the offline dataset", error)
        return None


def format_cat_fact(result: dict) -> str:
    """The final chat message for a fact, written by the server instead of a second model call."""
    return f"🐱 **Cat Fact Alert!** 🐱\n\n“{result['fact']}”\n\nWould you like another fact?"


@tool(read_only=True, formatter=format_cat_fact)
async def get_cat_fact() -> dict:
    """Get a random fact about cats."""
    if os.environ.get("SIDESPIN_ONLINE") == "1":
        fact = await _live_fact()
        if fact:
            return {"fact": fact, "source": "catfact.ninja"}
    number = _deck.next()
    return {"fact": _facts()[number], "source": "offline dataset", "number": number + 1}
