"""What one watcher of a streaming answer is sent: updates that carry what changed, against a full redraw.

Run: `python bench/bench_stream.py [--kib 64,256,1024] [--chunk 4] [--frame 64]`. One live turn is fed
an answer of the given size in `chunk`-character pieces; every `frame` pieces (about one update
of the page, which sends at most ~30 a second) a watcher takes an update. The baseline, in the
same run on the same turn, is the first version's way: every update redraws the whole turn.
Both are rendered by the app's own components; bytes and seconds are printed with their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fasthtml.common import Div, to_xml  # noqa: E402

from sidespin.events import TextDelta  # noqa: E402
from sidespin.web.live import LiveTurn  # noqa: E402
from sidespin.web.page import TurnParts, TurnWatch  # noqa: E402

PARAGRAPH = "The ball crossed the net, spun, and came back faster than anyone expected. " * 6


def answer(kib: int) -> str:
    text, n = [], 0
    while sum(len(t) for t in text) < kib * 1024:
        text.append(f"**Rally {n}.** {PARAGRAPH}\n\n")
        if n % 10 == 9:
            text.append("```python\n" + "print('ping')\n" * 20 + "```\n\n")
        n += 1
    return "".join(text)


def play(text: str, chunk: int, frame: int) -> tuple[int, int, float, float]:
    """Bytes sent by the watcher and by a full redraw, and the seconds each spent rendering."""
    turn = LiveTurn("bench")
    watch = TurnWatch(turn)
    diff_bytes = full_bytes = 0
    diff_seconds = full_seconds = 0.0
    pieces = [text[i:i + chunk] for i in range(0, len(text), chunk)]
    for index, piece in enumerate(pieces, 1):
        turn.apply(TextDelta(piece))
        if index % frame and index != len(pieces):
            continue
        started = time.perf_counter()
        diff_bytes += len(to_xml(Div(*watch.update())).encode())
        diff_seconds += time.perf_counter() - started
        started = time.perf_counter()
        full_bytes += len(to_xml(Div(*TurnParts(turn.record, turn.id, oob=True))).encode())
        full_seconds += time.perf_counter() - started
    return diff_bytes, full_bytes, diff_seconds, full_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kib", default="64,256", help="answer sizes in KiB, comma-separated")
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--frame", type=int, default=64, help="pieces per update")
    args = parser.parse_args()
    print(f"{'answer':>10} {'updates':>8} {'sent (changes)':>15} {'sent (redraw)':>15} {'per answer byte':>16} "
          f"{'saved':>7} {'render s':>9} {'redraw s':>9}")
    for kib in [int(k) for k in args.kib.split(",")]:

        async def run() -> tuple[int, int, float, float]:  # LiveTurn schedules its wake-ups on a loop
            return play(answer(kib), args.chunk, args.frame)

        text_bytes = len(answer(kib).encode())
        diff, full, diff_s, full_s = asyncio.run(run())
        updates = -(-len(answer(kib)) // (args.chunk * args.frame))
        print(f"{kib:>7} KiB {updates:>8} {diff:>15,} {full:>15,} {diff / text_bytes:>15.2f}x "
              f"{full / diff:>6.0f}x {diff_s:>9.2f} {full_s:>9.2f}")


if __name__ == "__main__":
    main()
