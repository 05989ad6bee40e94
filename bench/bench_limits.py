"""What the loop guard costs a streamed answer: `TurnControl.spend` over 1 MB in 4-character pieces, with the
check that an answer repeats itself (`sidespin.limits.looping`) and without it, in the same run.

    python bench/bench_limits.py [--runs 5]

Prints the median seconds of each and their ratio, and the cost a piece. A model streams about 76 pieces a
second on the development machine, so what matters is the cost a piece against 13 ms between pieces.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sidespin import limits  # noqa: E402
from sidespin.limits import TurnControl  # noqa: E402


def answer() -> list[str]:
    """About 1 MB of text that never repeats one piece 8 times in a row, in 4-character pieces."""
    text = "".join(f"Paragraph {n}: " + " ".join(f"word{k}" for k in range(60)) + "\n\n" for n in range(2500))
    return [text[i:i + 4] for i in range(0, len(text), 4)]


def spend_all(pieces: list[str]) -> float:
    control = TurnControl(seconds=60, tokens=10**9)
    started = time.perf_counter()
    for piece in pieces:
        control.spend(piece)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    pieces = answer()
    guarded, bare = [], []
    real = limits.looping
    for _ in range(args.runs):  # interleaved, so that a noisy moment weighs on both
        limits.looping = real
        guarded.append(spend_all(pieces))
        limits.looping = lambda text: False  # the baseline: the same counting, no loop check
        bare.append(spend_all(pieces))
    limits.looping = real
    g, b = statistics.median(guarded), statistics.median(bare)
    size = sum(len(p) for p in pieces)
    print(f"{len(pieces):,} pieces, {size:,} characters, {args.runs} runs each")
    print(f"  with the loop check     {g:.3f} s   {g / len(pieces) * 1e6:.2f} µs a piece")
    print(f"  without (baseline)      {b:.3f} s   {b / len(pieces) * 1e6:.2f} µs a piece")
    print(f"  ratio                   {g / b:.1f}×   (+{(g - b) / len(pieces) * 1e6:.2f} µs a piece; a piece comes "
          f"every ~13,000 µs from the 0.5B)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
