"""What one watcher of a streaming answer receives on the wire, per byte of the answer.

Run: `python bench/bench_stream.py [--kib 6,64] [--rate 56]`. A live turn is fed an answer of the
given size the way the embedded model streams it: one token (a few characters) at a time, at `rate`
tokens a second (56–76 measured on 2 shared cores under load, `sidespin/llm/embedded.py`). A watcher
takes what changed once a frame (`LiveTurn.frame`: streamed text wakes it at most that often), so an
update carries `rate × frame` tokens; no clock runs, the bytes are counted. Three ways, in the same run:

    before   every change one `update` event of out-of-band swaps (the added text a <span> in it),
             a frame of 0.03 s: the way the page was streamed up to November 2026
    lean     `TurnWatch.messages` as the stream route sends them, at the same frame of 0.03 s
    now      `TurnWatch.messages` at today's `LiveTurn.frame`

Bytes are those on the wire: the SSE messages (the `done` event included) in the chunks of HTTP/1.1's
chunked encoding, the route writing what changed in a frame at once (the baseline too, though it wrote each
message apart); against the answer's UTF-8 bytes. Events: SSE messages.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fasthtml.common import Div, NotStr, Span, sse_message  # noqa: E402

from sidespin.events import TextDelta, TurnDone  # noqa: E402
from sidespin.web.live import LiveTurn  # noqa: E402
from sidespin.web.page import TurnWatch  # noqa: E402

PARAGRAPH = "The ball crossed the net, spun, and came back faster than anyone expected. " * 6
BEFORE_FRAME = 0.03


def answer(kib: int) -> str:
    """Markdown of `kib` KiB: bold-led paragraphs, and a code block every ten."""
    text, n = [], 0
    while sum(len(t) for t in text) < kib * 1024:
        text.append(f"**Rally {n}.** {PARAGRAPH}\n\n")
        if n % 10 == 9:
            text.append("```python\n" + "print('ping')\n" * 20 + "```\n\n")
        n += 1
    return "".join(text)[: kib * 1024]


def tokens(text: str) -> list[str]:
    """The text in pieces the size of a small model's tokens: a word with its space, long words cut at 6."""
    pieces = re.findall(r" ?[^\s]{1,6}|\n|\s", text)
    assert "".join(pieces) == text
    return pieces


class OneUpdateEvent(TurnWatch):
    """The way before: every change one `update` event; the added text an out-of-band <span> in it."""

    def messages(self) -> list[str]:
        parts, blocks, added = self.update()
        tid = self.turn.id
        if blocks:  # the blocks appended, the tail started again
            parts += [Div(NotStr(blocks), hx_swap_oob=f"beforeend:#{tid}-body-blocks"),
                      Div(added, id=f"{tid}-body-tail", cls="tail writing", hx_swap_oob="true")]
            added = ""
        if added:
            parts.append(Span(added, hx_swap_oob=f"beforeend:#{tid}-body-tail"))
        return [sse_message(Div(*parts), event="update")] if parts else []


def play(text: str, watch_type: type[TurnWatch], per_update: int) -> tuple[int, int]:
    """The bytes and events a watcher receives while `text` streams a token at a time."""
    turn = LiveTurn("bench")
    watch = watch_type(turn)
    sent = events = 0

    def take() -> None:  # the route writes what changed in a frame at once: one HTTP chunk
        nonlocal sent, events
        messages = watch.messages()
        size = len("".join(messages).encode())
        sent += size + len(f"{size:x}\r\n\r\n") if size else 0
        events += len(messages)

    take()  # a page connects as the turn starts
    for index, piece in enumerate(tokens(text), 1):
        turn.apply(TextDelta(piece))
        if index % per_update == 0:
            take()
    turn.apply(TurnDone(reason="stop"))
    take()
    done = len(sse_message(Div(), event="done").encode())
    return sent + done + len(f"{done:x}\r\n\r\n"), events + 1


async def run(text: str, watch_type: type[TurnWatch], per_update: int) -> tuple[int, int]:
    return play(text, watch_type, per_update)  # LiveTurn schedules its wake-ups on a running loop


async def _frame() -> float:
    """Today's `LiveTurn.frame` (a live turn is made inside an event loop)."""
    return LiveTurn("bench").frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kib", default="6,64", help="answer sizes in KiB, comma-separated")
    parser.add_argument("--rate", type=float, default=56.0, help="tokens a second the model streams")
    args = parser.parse_args()
    now_frame = asyncio.run(_frame())
    ways = [("before", OneUpdateEvent, BEFORE_FRAME), ("lean", TurnWatch, BEFORE_FRAME), ("now", TurnWatch, now_frame)]
    print(f"{'answer':>9} {'tokens':>7} {'way':>7} {'frame s':>8} {'tok/upd':>8} {'events':>7} {'bytes':>9} "
          f"{'per answer byte':>16} {'vs before':>10}")
    for kib in [int(k) for k in args.kib.split(",")]:
        text = answer(kib)
        size = len(text.encode())
        baseline = 0

        for name, watch_type, frame in ways:
            per_update = max(1, int(args.rate * frame))
            sent, events = asyncio.run(run(text, watch_type, per_update))
            baseline = baseline or sent
            print(f"{kib:>5} KiB {len(tokens(text)):>7} {name:>7} {frame:>8.3f} {per_update:>8} {events:>7} "
                  f"{sent:>9,} {sent / size:>15.2f}x {sent / baseline:>9.2f}x")


if __name__ == "__main__":
    main()
