"""The seed's mock web search (seed 002): answers from a small offline dataset and says so.

Nothing goes online. `data/web_search.json` holds a few dozen canned pages
(the seed's GOOGL and MSFT quotes among them); a query is scored against each
page's title and keywords, rarer words weighing more. The tool is not marked
read-only, so the web page asks before running it: the seed's approval flow.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

from sidespin.tools import tool

SOURCE = "offline sample data, not live"
MAX_MATCHES = 3
_DATASET = Path(__file__).resolve().parent.parent / "data" / "web_search.json"
_STOPWORDS = frozenset(
    "a an and are as at be by can current do does find for from how i in is it latest me my now of on or "
    "please search show the this to today us was what when where which who why with you your".split()
)


def _words(text: str) -> set[str]:
    """Lower-case words, plural s dropped, stopwords out."""
    words = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        if word not in _STOPWORDS and len(word) > 1:
            words.add(word)
    return words


@lru_cache(maxsize=1)
def _pages() -> tuple[tuple[dict, frozenset[str]], ...]:
    pages = json.loads(_DATASET.read_text(encoding="utf-8"))
    return tuple((page, frozenset(_words(page["title"] + " " + " ".join(page["keywords"])))) for page in pages)


def _weights() -> dict[str, float]:
    """Inverse document frequency: a word found on few pages says more than "stock" or "price"."""
    pages = _pages()
    counts: dict[str, int] = {}
    for _, words in pages:
        for word in words:
            counts[word] = counts.get(word, 0) + 1
    return {word: math.log(1 + len(pages) / count) for word, count in counts.items()}


@tool
def web_search(query: str) -> dict:
    """Search the web. This build answers from offline sample data (a few dozen canned pages), not live results.

    Args:
        query: what to look for, e.g. "google stock price"
    """
    wanted = _words(query)
    weights = _weights()
    scored = []
    for page, words in _pages():
        score = sum(weights[word] for word in wanted & words)
        if score > 0:
            scored.append((score, page))
    scored.sort(key=lambda item: item[0], reverse=True)
    best = scored[0][0] if scored else 0.0
    matches = [
        {"title": page["title"], "url": page["url"], "snippet": page["snippet"]}
        for score, page in scored[:MAX_MATCHES]
        if score >= 0.6 * best
    ]
    answer: dict = {"source": SOURCE, "query": query, "matches": matches}
    if not matches:
        answer["note"] = (
            "nothing in the offline sample matched; it only holds a few dozen pages "
            "(big-tech stock quotes, bitcoin, MCP, llama.cpp, Python and some general facts)"
        )
    return answer
