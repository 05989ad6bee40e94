"""A conversation as a decision reads it: OpenAI-shaped messages, read once into `Talk`."""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

from sidespin.tools import failed
from sidespin.tooluse.values import QUOTED, asks_change, telling_words

__all__ = ["Talk", "Answered", "parts_of"]

_REQUEST_BREAK = re.compile(r"(?i)(?<=[.?!;])(?<!\d\.)\s+|(?<![\s,])(?:\s*,)?\s+(?:and|also|as well as|then|plus)\s+")
_JOINING = re.compile(r"(?i)\s(?:and|or|also|plus|then|und|oder|auch|dann|et|ou|puis|aussi|y|o|u|e|luego|tambi[ée]n|"
                      r"oppure|anche|poi)\s")  # two things joined, in five languages
_LIST_MARK = re.compile(r"[,，、;；]|(?<=[?？!！。])\s*\S")


def parts_of(text: str) -> list[str]:
    """The parts of a message that asks several things (sentences, requests joined by "and", "then"…: of three words
    or more, or asking a change, "Stage it and commit it"); [] if one."""
    parts = [part for part in _REQUEST_BREAK.split(text.strip()) if len(part.split()) >= 3 or asks_change(part)]
    return parts if len(parts) > 1 else []


@dataclass(frozen=True)
class Answered:
    """A call the conversation made: the index of its message, its tool, arguments and the text that came back."""

    place: int
    name: str
    arguments: dict[str, Any]
    answer: str

    @property
    def failed(self) -> bool:
        return failed(self.answer)


class Talk:
    """What a decision needs of `messages`: the person's last message, the turn since it, the calls made."""

    def __init__(self, messages: Sequence[dict[str, Any]]) -> None:
        self.messages = list(messages)
        self._last_user = max((i for i, m in enumerate(self.messages) if m.get("role") == "user"), default=-1)
        users = [m.get("content") for m in self.messages if m.get("role") == "user"]  # what the person wrote
        self.last: str = users[-1] if users and isinstance(users[-1], str) else ""  # their last message ("" if none)
        self.previous: str = users[-2] if len(users) > 1 and isinstance(users[-2], str) else ""  # the one before it
        self.told = " ".join(content for content in users if isinstance(content, str))  # all of it, joined by spaces
        self.again = bool(self.messages) and self.messages[-1].get("role") == "tool"  # results came back: decide again
        # whether the person was answered before their last message, which is the last of the conversation
        self.answered_in_words_before = self._last_user == len(self.messages) - 1 and any(
            m.get("role") == "assistant" for m in self.messages[:self._last_user])

    @cached_property
    def parts(self) -> list[str]:
        return parts_of(self.last)

    @property
    def asks_several(self) -> bool:
        """Whether the last message may ask for more than one call: an "and", an "or", a list, or a second sentence."""
        last = self.last.strip()
        return bool(_REQUEST_BREAK.search(last) or _LIST_MARK.search(last) or _JOINING.search(last))

    @property
    def rounds(self) -> int:
        """The rounds of calls made since the person's last message."""
        return len({a.place for a in self.this_turn})

    @cached_property
    def answered(self) -> list[Answered]:
        """Every call of the conversation that has its answer, in order."""
        answers = {m.get("tool_call_id"): str(m.get("content") or "") for m in self.messages if m.get("role") == "tool"}
        made = []
        for place, message in enumerate(self.messages):
            for one in (call for call in message.get("tool_calls") or [] if call.get("id") in answers):
                function = one.get("function") or {}
                with contextlib.suppress(json.JSONDecodeError, TypeError):
                    arguments = json.loads(function.get("arguments") or "{}")
                    made.append(Answered(place, str(function.get("name")), arguments, answers[one.get("id")]))
        return made

    @property
    def this_turn(self) -> list[Answered]:
        return [a for a in self.answered if a.place > self._last_user]

    @property
    def last_called(self) -> str | None:
        return self.answered[-1].name if self.answered else None

    @property
    def about_last_result(self) -> bool:
        """Whether a new message shares a telling word (its first five letters), not one of a text it quotes (what is
        written: "the message 'Add a to-do list'"), with the conversation's last result."""
        last = self.answered[-1].answer if self.answered and not self.again else ""
        asked = telling_words(QUOTED.sub(" ", self.last))
        return bool({w[:5] for w in asked if len(w) >= 4} & {w[:5] for w in telling_words(last)})

    def texts(self, turn: bool = False) -> list[str]:
        """Every message's text and every call's arguments, in order (with `turn`, from the person's last message)."""
        return [text for m in self.messages[max(self._last_user, 0) if turn else 0:]
                for text in ([m["content"]] if isinstance(m.get("content"), str) else [])
                + [str((c.get("function") or {}).get("arguments") or "") for c in m.get("tool_calls") or []]]
