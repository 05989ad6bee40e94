"""Searching every conversation: the FTS5 index against reading and scanning every file, in the same run.

Run: `python bench/bench_search.py [--conversations 2000] [--turns 6] [--queries 50]`. It writes that many
conversations (transcripts as sidespin records them) into a temporary store, builds the index once (timed),
then times `SearchIndex.search` (which first checks every file's stamp, so it stays in step with hand edits)
against the baseline a person would otherwise use: read and parse every file and look for the words.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loguru import logger  # noqa: E402

from sidespin.events import TextDelta, TurnDone  # noqa: E402
from sidespin.search import SearchIndex, messages_of  # noqa: E402
from sidespin.transcript import TranscriptRecorder, TranscriptStore  # noqa: E402

WORDS = ("rally net spin serve paddle ball table edge lob smash chop loop drive block counter push flick "
         "topspin backspin sidespin umpire score deuce advantage match point game set").split()


def sentence(rng: random.Random, n: int = 40) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randrange(500)) for _ in range(n)) + "."


def build(store: TranscriptStore, conversations: int, turns: int) -> None:
    rng = random.Random(7)
    for _ in range(conversations):
        recorder = TranscriptRecorder(store, store.new(), "bench", min_interval=0)
        for _ in range(turns):
            recorder.user(sentence(rng, 12))
            recorder.apply(TextDelta(sentence(rng)))
            recorder.apply(TurnDone())


def scan(store: TranscriptStore, words: list[str]) -> int:
    """The baseline: every file read and parsed, each message checked for every word."""
    found = 0
    for cid, _, _ in store.list():
        for _, _, text in messages_of(store.load(cid)):
            lowered = text.lower()
            found += all(word in lowered for word in words)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    logger.remove()  # one log line per saved write would time the console
    rng = random.Random(11)
    queries = [[rng.choice(WORDS) + str(rng.randrange(500)) for _ in range(2)] for _ in range(args.queries)]
    with tempfile.TemporaryDirectory() as folder:
        store = TranscriptStore(Path(folder) / "conversations")
        started = time.perf_counter()
        build(store, args.conversations, args.turns)
        print(f"wrote {args.conversations} conversations of {args.turns} turns in {time.perf_counter() - started:.1f} s")
        index = SearchIndex(Path(folder) / "search.sqlite3", store)
        started = time.perf_counter()
        index.refresh()
        print(f"index built from the files in {time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        hits = sum(len(index.search(" ".join(words))) for words in queries)
        indexed = (time.perf_counter() - started) / len(queries)
        baseline_queries = queries[: max(1, len(queries) // 10)]  # the scan is slow: fewer of them
        started = time.perf_counter()
        scanned = sum(scan(store, words) for words in baseline_queries)
        baseline = (time.perf_counter() - started) / len(baseline_queries)
        same = sum(len(index.search(" ".join(words))) for words in baseline_queries)
        index.close()
    print(f"search through the index (stamps checked): {indexed * 1000:.1f} ms a query ({hits} hits in all)")
    print(f"baseline, read and scan every file:        {baseline * 1000:.1f} ms a query ({scanned} hits; "
          f"the index found {same} for the same queries, the last word matching as a prefix)")
    print(f"ratio: {baseline / indexed:.1f}x faster")


if __name__ == "__main__":
    main()
