"""The one value a decision's stages pass along (`sidespin.tooluse.pipeline`), and the hooks a shape offers them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Sequence

from loguru import logger

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.conversation import Talk
from sidespin.tooluse.mend import mendable
from sidespin.tooluse.model import Model
from sidespin.tooluse.offer import deprecated_for, family_named
from sidespin.tooluse.relevance import Embedder, Ranked, agreed, firsts, meant, table_scores
from sidespin.tooluse.values import (asks_change, asks_question, change_asked, kind_asked, mentioned, reads,
                                     telling_words, words_of)

__all__ = ["Decision", "Shape", "NAMED_FLOOR", "FOLLOW_UP"]

NAMED_FLOOR = 0.15  # the chance of a call down to which a message that names a tool (or a shape serves) is one
FOLLOW_UP = 5  # words of a message at most that read as a follow-up of the one before ("And in Tokyo?")
_CONTINUITY = 0.5  # what the table of the conversation's last call adds to its relevance, as a share of the best's
_GOES_ON = re.compile(r"(?i)\W*(?:and|also|then|so|but|et|puis|alors|mais|und|dann|aber|y|luego|pero|e|poi|ma)\b")


class Shape:
    """The hooks of one kind of tool at three stages (`sidespin.tooluse.shapes`); each does nothing by default."""

    id: ClassVar[str]
    floor: ClassVar[float] = NAMED_FLOOR  # the chance of a call down to which a message it favours is written as one

    def applies(self, tools: Sequence[Tool]) -> bool:
        raise NotImplementedError

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        """(shortlist, whether) A rule id when the message asks for what `tools` of this kind serve; else None."""
        return None

    def unasked(self, decision: Decision, tool: Tool) -> str | None:
        """(whether) A rule id where the message asks nothing `tool`, of this kind, does: its name is not chosen."""
        return None

    def narrow(self, decision: Decision) -> dict[str, Tool]:
        """(which) The tools a name is chosen among."""
        return decision.names

    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        """(arguments) The call as this kind of tool needs it (written after `written`), or None to refuse it."""
        return call

    def carry_on(self, decision: Decision) -> ToolCall | None:
        """(shortlist, after results) The call that carries on what this turn's calls began, written by the shape
        from the message and the results; None where there is none."""
        return None


@dataclass
class Decision:
    """What is known of a decision so far. Each stage reads it, adds to it, and names the next stage."""

    talk: Talk  # the conversation
    tools: list[Tool]  # every tool offered to the model
    shapes: Sequence[Shape]  # the shapes that apply to these tools
    said: str  # everything the conversation said (`sidespin.tooluse.values.said_in`)
    embedder: Embedder | None = None  # sentence embeddings, where they could be loaded
    ranked: list[Ranked] = field(default_factory=list)  # shortlist: the tools by relevance, best first
    alone: list[Ranked] = field(default_factory=list)  # ... to the last message alone, where a follow-up's differs
    table: list[Tool] = field(default_factory=list)  # the tools the model reads for this decision
    named: set[str] = field(default_factory=set)  # the tools the message names by 2 words or more of their name
    prompt: str = ""  # the decision's prompt, with `table` offered
    chance: float = 0.0  # whether: the chance that the answer opens a call
    bar: float = 0.0  # ... above which it calls
    names: dict[str, Tool] = field(default_factory=dict)  # which: the tools a name is still chosen among
    narrowed: bool = False  # ... fewer than the table's, as a shape or the message's naming chose them
    stated: bool = False  # ... the ones doing what the message states (a shape's): the model is made to write one
    unasked: bool = False  # ... some of the table's taken out as not asked (a shape's `unasked`): the model's
    # likeliest name may have been one of them, so the chance of the next is no measure of its knowing which
    written: str = ""  # the answer so far: the prompt, a call's opening, the calls written
    name: str = ""  # the name chosen for the call being written
    call: ToolCall | None = None  # the call being written
    calls: list[ToolCall] = field(default_factory=list)  # the calls decided
    retried: bool = False  # the answer's next name was tried already (once an answer)
    unsure: bool = False  # ... after a first name the model was unsure of (`pipeline.NAME_FLOOR`)
    change_left: bool = False  # after results: the round only read, and the message asks a change (one more round)
    notes: list[str] = field(default_factory=list)  # the rule ids that acted, for the log
    left_out: list[str] = field(default_factory=list)  # ... of those, the ones that left tools out (`Shape.unasked`)

    @property
    def shaped(self) -> bool:
        """Whether a shape's rule chose the table, or the tools, for the message."""
        return any(note.split(".")[0] in {shape.id for shape in self.shapes} for note in self.notes)

    @property
    def query(self) -> str:
        """What relevance is ranked against: the person's message; after results, its parts that had no round of
        calls yet; a follow-up, short or begun with "and", "then"… ("And how many of those…?"), with the one
        before."""
        talk = self.talk
        if talk.again and len(self.requests) > talk.rounds:
            return " ".join(self.requests[talk.rounds:])
        if talk.previous and (len(words_of(talk.last)) <= FOLLOW_UP or _GOES_ON.match(talk.last)):
            return f"{talk.previous} {talk.last}"
        return talk.last

    @cached_property
    def requests(self) -> list[str]:
        """The parts of the message (`Talk.parts`, one round of calls each), after results without the ones that only
        give a detail of what was asked (`core.detail_given`): a part after the first, asking no change nor question,
        whose every telling word is in the values this turn's calls carry or in a called tool's own text ("The
        database is shop.db." after a query of `shop.db`; not "I also want the size of plan.md.")."""
        talk = self.talk
        if not talk.again or not talk.parts:
            return talk.parts
        called = {a.name for a in talk.this_turn}
        told = [json.dumps(a.arguments, ensure_ascii=False) for a in talk.this_turn] + [
            f"{t.name} {t.description} {json.dumps(t.input_schema, ensure_ascii=False)}" for t in self.tools
            if t.name in called]
        known = {w[:5] for text in told for w in telling_words(text)}
        return talk.parts[:1] + [part for part in talk.parts[1:] if asks_change(part) or asks_question(part) or not {
            w[:5] for w in telling_words(part)} <= known]

    def table_in(self, cut: list[list[Tool]]) -> tuple[int, str]:
        """The table the model reads, and why: one a shape favours for the message (one with a tool of the kind of
        change asked, or that reads, first: `core.kind_asked`); one with a tool the message names by 2 words or more
        ("my to-do list": `todo_list`), else with the family it names ("a to-do": `todo_*`); after results, the failed
        call's to mend, else the most relevant to the parts left; for a follow-up, short or sharing a word with the
        last result, the last call's (unless, short and sharing no word with the result, its words and meaning both
        rank another table's tool first: "Stage that file." after a write); else the most relevant, a table as
        relevant as its best tool that may open the answer (`core.table_of_kind`), the last call's weighing half as
        much again unless the message's words and meaning rank first two tools of another table
        (`core.table_agreed`). A table with nothing left to call is passed over."""
        if len(cut) == 1:
            return 0, "the only table"
        talk = self.talk
        closed = self.closed
        open_ = [i for i, table in enumerate(cut) if any(t.name not in closed for t in table)] or list(range(len(cut)))
        scores = table_scores(cut, self.ranked, lambda t, table: kind_asked(t, talk.last) and change_asked(
            t, talk.last, table))  # its best tool that may open the answer (`core.table_of_kind`)
        relevant = sorted(open_, key=lambda i: -scores[i])
        plain = table_scores(cut, self.ranked)
        if relevant[0] != min(open_, key=lambda i: -plain[i]):
            self.notes.append("core.table_of_kind")
        favoured = [i for i in relevant if any(shape.favours(self, cut[i]) for shape in self.shapes)]
        change = asks_change(talk.last)  # of those, first one with a tool of the kind asked: a change, else a reading
        fits = [i for i in favoured if any(kind_asked(t, talk.last) and reads(t, cut[i]) != change for t in cut[i])]
        if favoured and not talk.again:
            return (fits or favoured)[0], "a shape favours it"
        named = self.named or family_named(self.tools, talk.last)  # a tool, else the one family of all, named
        if named and not talk.again:
            return next(i for i in relevant + list(range(len(cut))) if named & {t.name for t in cut[i]}), "named"
        mending = mendable(talk)
        if talk.again and mending:
            return next(i for i, table in enumerate(cut) if any(t.name in mending for t in table)), "a call to mend"
        last = [i for i in open_ if any(t.name == talk.last_called for t in cut[i])]
        if last and not talk.again and (len(words_of(talk.last)) <= FOLLOW_UP or talk.about_last_result):
            if talk.about_last_result or (both := agreed(self.alone)) is None or both in cut[last[0]]:
                return last[0], "a follow-up of its last call"
            return next(i for i, table in enumerate(cut) if both in table), "a follow-up its own words place elsewhere"
        bonus = {i: _CONTINUITY * scores[relevant[0]] for i in last if not self.change_left}
        best = max(relevant, key=lambda i: scores[i] + bonus.get(i, 0.0))
        placed = firsts(self.alone)  # the tools its words and its meaning rank first
        both = [i for i in open_ if placed and placed <= {t.name for t in cut[i]}]
        if best in last and both and both[0] != best:  # both in another table than the last call's
            self.notes.append("core.table_agreed")
            return both[0], "the table its words and meaning both place it in"
        return best, "the most relevant" + (", with the last call's" if best in last else "")

    @property
    def closed(self) -> set[str]:
        """The tools not to call again this turn: those called since the message (but to mend a failed call), and
        those deprecated for one."""
        closed = {a.name for a in self.talk.this_turn} - mendable(self.talk)
        return closed | {t.name for t in self.tools if deprecated_for(t) in closed}

    def left_a_change(self) -> bool:
        """Whether the turn's one round only read, and did not fail, where the message asks a change: the change is
        left (`core.change_after_read`: a look-up found the id it needs, a file was read before its edit)."""
        tools = {t.name: t for t in self.tools}
        return self.talk.rounds == 1 and asks_change(self.talk.last) and all(
            a.name in tools and reads(tools[a.name], self.tools) and not a.failed for a in self.talk.this_turn)

    def far(self, call: ToolCall, floor: float) -> bool:
        """Whether an answer's first call, where no shape chose the table, carries nothing the conversation said (nor a
        name its server holds) and its tool is far from the message (`core.meaning_floor`): no word in common (BM25),
        its gist's cosine under `floor`, no word of its name said in another language (`relevance.meant`). The model's
        next likeliest name after a refused one (`core.next_name`) is a guess: what it carries of the message's words
        does not bring it near."""
        said = "\n".join([self.said, *self.names[call.name].holds]).lower()
        guess = self.retried and "core.next_name" in self.notes
        if self.calls or self.talk.again or self.shaped or not guess and any(
                mentioned(v, said, k) for k, v in call.arguments.items() if not isinstance(v, bool)):
            return False
        ranked = next((r for r in self.ranked if r.tool.name == call.name), None)
        if ranked is None or ranked.cosine is None or ranked.cosine >= floor or ranked.bm25 is not None:
            return False
        if any(meant(w, telling_words(call.name), self.embedder) for w in telling_words(self.talk.last) if len(w) >= 4):
            return False  # a word of its name, said in another language ("notas" of `note_list`)
        self.notes.append("core.meaning_floor")
        logger.info("TOOLUSE_FAR {} {} cosine={:.2f}: nothing said in it, and far in meaning from the message",
                    call.name, json.dumps(call.arguments, ensure_ascii=False)[:200], ranked.cosine)
        return True

    def carried_on(self) -> bool:
        """Whether a shape wrote the call that carries on this turn's calls (`Shape.carry_on`), now the decision's."""
        names = {t.name for t in self.tools}
        call = next((c for shape in self.shapes if (c := shape.carry_on(self)) and c.name in names), None)
        if call is not None:
            logger.info("TOOLUSE_SHORTLIST none: {} carries on this turn's calls", call.name)
            self.calls.append(call)
        return call is not None

    def choosable(self, closed: set[str]) -> dict[str, Tool]:
        """The table's tools a name may be chosen among: not `closed`, nor one a shape finds the message does not ask
        for (`Shape.unasked`: its rule logged in `left_out`, not in `notes`, for leaving a tool out is no shape
        choosing one; `unasked` set where one is left out)."""
        unasked = {t.name: rule for t in self.table for shape in self.shapes if (rule := shape.unasked(self, t))}
        self.left_out = list(dict.fromkeys(unasked.values()))  # logged, but no shape's choice (`shaped`)
        self.unasked = bool(unasked)
        return {t.name: t for t in self.table if t.name not in closed and t.name not in unasked}

    def summary(self) -> dict[str, Any]:
        """What the decision log line says."""
        return {"calls": [c.name for c in self.calls], "p_call": round(self.chance, 2), "bar": round(self.bar, 2),
                "table": len(self.table), "tools": len(self.tools), "rules": [*self.left_out, *self.notes]}
