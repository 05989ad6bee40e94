"""Interceptor against a pass-through loop and the seed's re-scan-the-buffer approach.

Run: `python bench/bench_intercept.py [--sizes 64,256] [--chunk 4]`. Same input for
every contender (prose with a tool-call block every ~2 KiB), same chunks, same run.
Each contender's visible text is checked against the others before it is timed.
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sidespin.intercept import Block, Event, Interceptor, Text  # noqa: E402

OPEN, CLOSE = "<mcp-request>", "</mcp-request>"
SENTENCES = [
    "The cat sat in the warm patch of sunlight and ignored everyone.",
    "Here is what I found about your question, with a few caveats.",
    "Cats sleep for around twelve to sixteen hours a day, sometimes more.",
    "If the value is 3 < 4, the comparison holds and the loop continues.",
    "You can call `get_time` with any IANA time zone, such as Europe/Paris.",
    "A group of cats is called a clowder, which is a lovely word.",
    "Let me look that up for you before I answer.",
    "The result came back quickly, so here is the summary.",
    "Some people think <b>bold</b> markup helps; others prefer plain text.",
    "I rolled the dice twice and got a seven both times, which is lucky.",
]
CALLS = [
    '<mcp-request>\n  <tool name="get_cat_fact" />\n</mcp-request>',
    '<mcp-request>\n  <tool name="get_time">\n    <param name="timezone">Europe/Paris</param>\n'
    "  </tool>\n</mcp-request>",
    '<mcp-request><tool name="roll_dice"><params>{"sides": 6, "count": 2}</params></tool></mcp-request>',
]
REPEATS = 5


def make_input(size: int, seed: int = 7) -> str:
    """Prose paragraphs with a block roughly every 2 KiB, exactly `size` characters, ending in prose."""
    rng = random.Random(seed)
    parts: list[str] = []
    total = since_block = 0
    while True:
        if since_block >= 2048:
            piece = rng.choice(CALLS) + "\n"
            since_block = 0
        else:
            piece = " ".join(rng.choice(SENTENCES) for _ in range(rng.randint(2, 5))) + rng.choice([" ", "\n\n"])
            since_block += len(piece)
        if total + len(piece) > size - 64:
            break
        parts.append(piece)
        total += len(piece)
    parts.append("x" * (size - total - 1) + ".")
    return "".join(parts)


def chunked(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def pass_through(chunks: list[str]) -> list[str]:
    """(a) The minimal loop: every chunk straight to the output."""
    out: list[str] = []
    for chunk in chunks:
        out.append(chunk)
    return out


class PassThroughStage:
    """(a') The same interface as the interceptor, intercepting nothing: one Text per chunk."""

    def feed(self, chunk: str) -> list[Event]:
        return [Text(chunk)]

    def close(self) -> list[Event]:
        return []


def drive(stage: Interceptor | PassThroughStage, chunks: list[str]) -> list[Event]:
    """The loop the rally runs: feed every chunk, collect the events."""
    feed = stage.feed
    events: list[Event] = []
    for chunk in chunks:
        events += feed(chunk)
    events += stage.close()
    return events


_BLOCK_RE = re.compile(r"<mcp-request>.*?</mcp-request>", re.DOTALL)


def rescan(chunks: list[str]) -> list[str]:
    """(b) The seed's approach: grow one buffer, and on every chunk search all of it again.

    `"<mcp-request>" in buffer`, then `re.search` for complete blocks from the start of
    the buffer; visible text is the buffer minus complete blocks, cut at an unfinished
    one (and at a trailing partial `<mcp-request>`, so nothing leaks). Only what was not
    shown yet is emitted: the quadratic cost is the searching, not extra copying.
    """
    buffer = ""
    shown = 0  # visible characters already emitted
    out: list[str] = []
    for chunk in chunks:
        buffer += chunk
        pieces: list[tuple[int, int]] = []  # visible spans of the buffer
        if OPEN in buffer:
            pos = 0
            while (m := _BLOCK_RE.search(buffer, pos)) is not None:
                pieces.append((pos, m.start()))
                pos = m.end()
            start = buffer.find(OPEN, pos)
            pieces.append((pos, start if start >= 0 else len(buffer)))
        else:
            pieces.append((0, len(buffer)))
        last_start, last_end = pieces[-1]
        for k in range(min(len(OPEN) - 1, last_end - last_start), 0, -1):
            if buffer.endswith(OPEN[:k], last_start, last_end):
                pieces[-1] = (last_start, last_end - k)
                break
        seen = 0
        for a, b in pieces:
            if seen + (b - a) > shown:
                skip = max(0, shown - seen)
                out.append(buffer[a + skip : b])
                shown += b - a - skip
            seen += b - a
    return out


def visible(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, Text))


def best_of(run: Callable[[], object], repeats: int) -> float:
    """Fastest of `repeats` runs, with the garbage collector off as `timeit` does."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            started = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - started)
        finally:
            gc.enable()
    return best


def bench(size_kib: int, chunk: int, rescan_repeats: int) -> dict[str, float]:
    text = make_input(size_kib * 1024)
    chunks = chunked(text, chunk)
    events = drive(Interceptor(), chunks)
    expected = _BLOCK_RE.sub("", text)
    if visible(events) != expected or "".join(rescan(chunks)) != expected:
        raise SystemExit(f"BENCH_MISMATCH at {size_kib} KiB: the contenders disagree on the visible text")
    if "".join(pass_through(chunks)) != text or visible(drive(PassThroughStage(), chunks)) != text:
        raise SystemExit("BENCH_MISMATCH: pass-through lost text")
    blocks = sum(isinstance(e, Block) for e in events)
    return {
        "blocks": blocks,
        "chunks": len(chunks),
        "pass": best_of(lambda: pass_through(chunks), REPEATS),
        "stage": best_of(lambda: drive(PassThroughStage(), chunks), REPEATS),
        "rescan": best_of(lambda: rescan(chunks), rescan_repeats),
        "icept": best_of(lambda: drive(Interceptor(), chunks), REPEATS),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,256", help="input sizes in KiB, comma-separated")
    parser.add_argument("--chunk", type=int, default=4, help="characters per chunk")
    args = parser.parse_args()
    print(f"Interceptor benchmark: {args.chunk}-character chunks, a block every ~2 KiB, best of {REPEATS} "
          f"(re-scan: best of 2 at 64 KiB, one run above), gc off while timing. Python {sys.version.split()[0]}")
    header = (f"{'size':>8} {'chunks':>7} {'blocks':>6} {'pass-through s':>15} {'pass stage s':>13} "
              f"{'re-scan s':>10} {'interceptor s':>14} {'re-scan/icpt':>13} {'icpt/pass':>10} {'icpt/stage':>11}")
    print(header)
    print("-" * len(header))
    results = {}
    for size in (int(s) for s in args.sizes.split(",")):
        r = bench(size, args.chunk, rescan_repeats=2 if size <= 64 else 1)
        results[size] = r
        print(f"{size:>5} KiB {r['chunks']:>7} {r['blocks']:>6} {r['pass']:>15.5f} {r['stage']:>13.5f} "
              f"{r['rescan']:>10.3f} {r['icept']:>14.5f} {r['rescan'] / r['icept']:>12.0f}x "
              f"{r['icept'] / r['pass']:>9.1f}x {r['icept'] / r['stage']:>10.2f}x")
    print()
    print("pass-through = bare loop appending each chunk to a list; pass stage = the interceptor's")
    print("interface with no interception (feed(chunk) -> [Text(chunk)]), driven by the same loop.")
    top = max(results)
    r = results[top]
    print(f"targets at {top} KiB: re-scan/interceptor = {r['rescan'] / r['icept']:.0f}x (want >= 100x): "
          f"{'MET' if r['rescan'] / r['icept'] >= 100 else 'NOT MET'}; "
          f"interceptor/pass stage = {r['icept'] / r['stage']:.2f}x (want <= 4x): "
          f"{'MET' if r['icept'] / r['stage'] <= 4 else 'NOT MET'}; "
          f"interceptor/bare loop = {r['icept'] / r['pass']:.1f}x (want <= 4x): "
          f"{'MET' if r['icept'] / r['pass'] <= 4 else 'NOT MET'}")


if __name__ == "__main__":
    main()
