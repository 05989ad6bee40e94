"""Tool use, decided by a small llama.cpp model: which calls a conversation's last message asks for.

One `Decision` goes through the stages in this order, each a method below logging one marker and naming the next:
`shortlist` (TOOLUSE_SHORTLIST), `whether` (TOOLUSE_WHETHER), `which` (TOOLUSE_WHICH), `arguments` (TOOLUSE_ARGUMENTS),
`mend` (TOOLUSE_MEND, after results), `more` (TOOLUSE_MORE); TOOLUSE_DECISION sums it up with the ids of the rules
that acted (for a user: docs/tool-use.md; why each rule: docs/tool-use-rules.md). A refused name or call gives way to
the model's next likeliest name, once an answer. Where a second, larger model runs beside (`Decider.second`), this
one decides whether (the larger one judging where this one is unsure), and the larger one names and writes the calls."""

from __future__ import annotations

import asyncio
import json
import time
from functools import partial
from typing import Any, Awaitable, Callable, Mapping, Sequence

from loguru import logger

from sidespin.errors import BadArguments, MalformedToolCall
from sidespin.tools import Tool, ToolCall, coerce_arguments
from sidespin.tooluse.conversation import Talk
from sidespin.tooluse.decision import NAMED_FLOOR, Decision
from sidespin.tooluse.mend import another_value, ids_as_listed, mendable, to_mend
from sidespin.tooluse.model import Llama, Model
from sidespin.tooluse.offer import (beyond_tools, deprecated_for, family_or_action, held_asked, held_for,
                                    held_said, held_spoken_of, look_ups, named, names_said, tables)
from sidespin.tooluse.relevance import Embedder, agreed, fewer, rank
from sidespin.tooluse.schema import (MAX_STRING, SHORT_STRING, as_defaults, as_said, bounds_for, choice_said,
                                     direction_said, dropped_whatever)
from sidespin.tooluse.shapes import shapes_for
from sidespin.tooluse.values import (IDS, asks_change, asks_question, change_asked, grounded,
                                     invented, kind_asked, last_word, mentioned, named_as_called,
                                     own_word, reads, said_in, telling_words)

__all__ = ["Decider", "THRESHOLD", "FIT", "MAX_CALLS", "NAMED_FLOOR", "NAME_FLOOR"]

MAX_CALLS = 4  # calls in one answer
THRESHOLD = 0.5  # chance of a call's opening above which the model calls, unless measured for it
MEANING_FLOOR = 0.15  # an unrelated tool's gist and a message: a cosine under this (relevance's embeddings)
FIT = 0.35  # the model's "yes, it does what is asked" below this, and the first call is not made
NAME_FLOOR = 0.05  # a first name less likely than this, among several, is the model not knowing which
UNSURE_NAME, FEWER = 0.6, 3  # a first name less likely than this is asked again among the FEWER most relevant and it
SURE_NAME = 0.8  # ... and gives way to another the model names there at least this likely
UNSURE_CALL = 0.25  # a chance of a call from this to the bar is the second model's to judge, where one runs
Stage = Callable[[Decision], Awaitable["Stage | None"]]


class Decider:
    """Decides, for a conversation and the tools offered, the calls its last message asks for."""

    def __init__(self, llama: Llama, *, threshold: float = THRESHOLD, fit: float = FIT, max_string: int = MAX_STRING,
                 embedder: Embedder | None = None, shapes: Mapping[str, bool] | None = None) -> None:
        self.model = Model(llama, max_string)
        self.threshold, self.fit, self.embedder = threshold, fit, embedder
        self.switches = dict(shapes or {})
        self.busy = asyncio.Lock()  # one decision at a time on llama.cpp's slot, and none while a table is warmed
        self.keep: Callable[[list[Tool]], Awaitable[None]] | None = None  # keeps a table's prompt evaluated
        self.second: Callable[[], Awaitable[Decider | None]] | None = None  # a larger model's decider

    async def decide(self, messages: Sequence[dict[str, Any]], tools: Sequence[Tool]) -> list[ToolCall]:
        """The calls the last message asks for ([] for none); raises `MalformedToolCall` or `BackendError`."""
        async with self.busy:
            started, talk = time.perf_counter(), Talk(messages)
            d = Decision(talk, list(tools), shapes_for(tools, self.switches), said_in(talk.texts()), self.embedder)
            stage: Stage | None = self.shortlist
            while stage is not None:
                stage = await stage(d)
            logger.info("TOOLUSE_DECISION {} in {:.3f}s", json.dumps(d.summary()), time.perf_counter() - started)
            return d.calls

    # --- 1. shortlist ----------------------------------------------------------------------------------------

    async def shortlist(self, d: Decision) -> Stage | None:
        if not d.tools:
            return None
        if d.talk.again and d.carried_on():  # a call a shape writes to carry on this turn's
            return None
        if d.talk.again and not (mendable(d.talk) or d.talk.rounds < len(d.requests)):  # one round each part
            d.change_left = d.left_a_change()  # asking, unless it only read and the message asks a change
            if not d.change_left:
                d.notes.extend(["core.detail_given"] * (d.talk.rounds < len(d.talk.parts)))  # (else none left anyway)
                logger.info("TOOLUSE_SHORTLIST none: the message's {} part(s) asking had their calls, and none failed",
                            max(1, len(d.requests)))
                return None
            d.notes.append("core.change_after_read")
        cut = tables(d.tools)
        d.ranked = await asyncio.to_thread(rank, d.tools, query := d.query, self.embedder)
        same = query == d.talk.last or d.talk.again or not d.talk.last_called  # else a follow-up: judged by its own
        d.alone = d.ranked if same else await asyncio.to_thread(rank, d.tools, d.talk.last, self.embedder)
        d.named = named(d.tools, d.talk.last)
        index, why = d.table_in(cut)
        d.table = cut[index]
        d.prompt = await self._kept_prompt(d)
        d.chance = await self.model.call_chance(d.prompt)
        logger.info("TOOLUSE_SHORTLIST {} tools, {} tables; read {} ({} tools, {}); most relevant: {}", len(d.tools),
                    len(cut), d.table[0].source, len(d.table), why, ", ".join(r.tool.name for r in d.ranked[:3]))
        return self.whether

    async def _kept_prompt(self, d: Decision) -> str:
        """This model's prompt for the decision's table, the table's shared part kept evaluated first."""
        if self.keep is not None:
            await self.keep(d.table)
        return await self.model.prompt(d.talk.messages, d.table)

    # --- 2. whether ------------------------------------------------------------------------------------------

    async def whether(self, d: Decision) -> Stage | None:
        again = d.talk.again
        d.bar = (self.threshold + 1) / 2 if again else self.threshold
        second = await self._second()
        if second is not None and UNSURE_CALL <= d.chance < d.bar:  # the larger model's judgement, on its prompt
            d.chance = await second.chance_of_a_call(d)
            d.notes.append("core.second_whether")
        system = [m for m in d.talk.messages[:1] if m.get("role") == "system"]
        if d.chance < d.bar and not again and d.talk.answered_in_words_before:
            d.chance = max(d.chance, await self.model.call_chance(await self.model.prompt(
                system + d.talk.messages[-1:], d.table)))
            d.notes.append("core.follow_up_alone")
        elif d.chance < d.bar and again and len(d.requests) > d.talk.rounds and asks_change(d.query):
            part = [{"role": "user", "content": d.query}]  # a change asked by a part no call has served yet
            d.chance = max(d.chance, await self.model.call_chance(await self.model.prompt(system + part, d.table)))
            d.bar = self.threshold
            d.notes.append("core.part_left")
        if not again:  # a message naming a tool or what it holds, or one a shape serves: down to a floor; shapes narrow
            named = (("core.tool_named", names_said), ("core.held_named", partial(held_asked, embedder=d.embedder)))
            floors = {rule: NAMED_FLOOR for rule, says in named if says(d.table, d.talk.last)}
            floors |= {rule: shape.floor for shape in d.shapes if (rule := shape.favours(d, d.table))}
            if floors and d.bar > d.chance >= min(floors.values()):
                d.notes.extend(floors)
                d.bar = min(floors.values())
            elif d.chance >= d.bar:
                d.notes.extend(rule for rule in floors if not rule.startswith("core."))
        if not again and beyond_tools(d.tools, d.talk.last):  # an act outside the machine no tool says: no call
            d.bar, d.notes = 1.01, [*d.notes, "core.beyond_tools"]
        logger.info("TOOLUSE_WHETHER p_call={:.2f} bar={:.2f}{}", d.chance, d.bar, " (after results)" * again)
        if d.chance < d.bar:
            return None
        d.names = d.choosable(d.closed if again else set())
        for shape in d.shapes:
            before, d.names = len(d.names), shape.narrow(d)
            d.narrowed = d.narrowed or len(d.names) < before
        if not again and not d.narrowed and d.named & set(d.names):  # the person named it: it, not a look-alike
            d.names, d.narrowed = {n: t for n, t in d.names.items() if n in d.named}, True
        elif not again and not d.narrowed and (family := family_or_action(list(d.names.values()), d.talk.last)):
            d.names = {n: t for n, t in d.names.items() if n in family[1]}  # among them, the checks still hold
            d.notes.append(family[0])
        elif not again and not d.narrowed and held_spoken_of(d.table, d.talk.last):  # one thing held: a tool taking
            question = asks_question(d.talk.last)  # a thing, not a listing of all; for a question, one that reads
            kept = {n: t for n, t in d.names.items() if t.required and (not question or reads(t, d.table, runs=True))}
            d.names, d.narrowed = (kept, question) if kept else (d.names, d.narrowed)
        if second is not None:  # the larger model names the calls and writes them, on its own prompt (no stage after)
            return await second.hand_over(d)
        d.written = d.prompt + (await self.model.call_format()).opening
        return self.which

    async def _second(self) -> Decider | None:
        """The larger model's decider, once loaded; None where there is none (or it could not start, from then on)."""
        if (second := await self.second() if self.second is not None else None) is None:
            self.second = None
        return second

    async def chance_of_a_call(self, d: Decision) -> float:
        """This model's chance of a call for a decision another model began, on its own prompt for the table."""
        async with self.busy:
            return await self.model.call_chance(await self._kept_prompt(d))

    async def hand_over(self, d: Decision) -> None:
        """The rest of a decision another model began (`which` onwards), on this model's prompt for its table."""
        async with self.busy:
            d.prompt = await self._kept_prompt(d)
            d.written = d.prompt + (await self.model.call_format()).opening
            logger.info("TOOLUSE_HANDED_OVER the larger model names and writes the calls")
            stage: Stage | None = self.which
            while stage is not None:
                stage = await stage(d)

    # --- 3. which --------------------------------------------------------------------------------------------

    async def which(self, d: Decision) -> Stage | None:
        if not d.names:
            return None
        found = await self.model.likeliest_name(d.written, list(d.names), write=d.stated)  # `core.name_forced`: 0.0
        if found is None:
            logger.info("TOOLUSE_WHICH none: no offered name is among the model's likeliest")
            return None
        name, chance = await self._among_fewer(d, *found)
        d.notes.extend(["core.name_forced"] * (chance == 0.0))
        if (other := deprecated_for(d.names[name])) in d.names and other != name:
            d.notes.append("core.deprecated")
            name = other
        d.name = name
        shown = f"{chance:.2f}"
        if not kind_asked(d.names[name], d.talk.last):  # at any stage: no deletion, nor a new thing, not asked
            logger.info("TOOLUSE_WHICH {} p={}: it deletes or makes a new thing, which is not asked", name, shown)
            d.notes.append("core.kind_asked")
            return self._retry(d, name)
        if not d.calls and len(d.names) > 1 and chance < NAME_FLOOR and not (d.narrowed or d.unasked) and (
                d.unsure or not d.retried):
            logger.info("TOOLUSE_WHICH {} p={}: the model does not know which tool", name, shown)
            d.unsure = True  # (a next name after a sure one refused is unlikely as a whole: `core.next_name`)
            return self._retry(d, name)
        if not d.calls and not d.narrowed and not (d.shaped or change_asked(d.names[name], d.talk.last, d.table)):
            logger.info("TOOLUSE_WHICH {} p={}: it changes things, and the message asks no change", name, shown)
            d.notes.append("core.change_asked")  # meant to do what was asked, no tool does it: no other name but a
            about = set(telling_words(name)) & set(telling_words(d.talk.last)) or held_said(d.table, d.talk.last, False)
            if not (d.talk.about_last_result or asks_question(d.talk.last) and about):  # reader's, for a thing the
                return None  # last result gave, or one a question asks of: held, or the refused name's (read_what_came)
            d.notes.append("core.read_what_came")
            d.names = {n: t for n, t in d.names.items()  # not the tool that gave the result: one that reads a thing
                       if n == name or reads(t, d.table, actions=True) and n != d.talk.last_called}
            return self._retry(d, name)
        held = asks_question(d.talk.last) and held_said([d.names[name]], d.talk.last, False)  # `core.held_fits`
        if not d.calls and not d.narrowed and not held and not await self.model.fits(d.names[name], d.talk.last,
                                                                                     self.fit):
            logger.info("TOOLUSE_WHICH {} p={}: it does not do what was asked", name, shown)
            return self._retry(d, name)
        d.notes.extend(["core.held_fits"] * (held and not d.calls and not d.narrowed))
        logger.info("TOOLUSE_WHICH {} p={}", name, shown)
        return self.arguments

    async def _among_fewer(self, d: Decision, name: str, chance: float) -> tuple[str, float]:
        """`core.fewer_names`: the name the model likes best on a prompt offering only `name` and the `FEWER` names
        most relevant to the message, where it is another and at least `SURE_NAME` likely (the answer's calls are then
        written on that prompt); else, and for a name the model is surer of, or among few, `name`. Only for the answer's
        first name, before results."""
        if chance >= UNSURE_NAME or len(d.names) <= FEWER + 1 or d.calls or d.narrowed or d.retried or d.talk.again:
            return name, chance
        short = [d.names[n] for n in fewer(list(d.names), d.ranked, name, FEWER)]
        prompt = await self.model.prompt(d.talk.messages, short)
        written = prompt + (await self.model.call_format()).opening
        found = await self.model.likeliest_name(written, [t.name for t in short])
        logger.info("TOOLUSE_WHICH {} p={:.2f}, unsure; among {}: {}", name, chance, ", ".join(t.name for t in short),
                    f"{found[0]} p={found[1]:.2f}" if found else "none")
        if found is None or found[0] == name or found[1] < SURE_NAME:
            return name, chance
        d.prompt, d.written, d.notes = prompt, written, [*d.notes, "core.fewer_names"]
        return found

    def _retry(self, d: Decision, refused: str, made_up: Sequence[str] = ()) -> Stage | None:
        """The next name, once an answer, when the answer's first call was refused: the tool left that words and
        meaning both rank first (`core.agreed`), else the model's next likeliest; where the refused call's values were
        made up, not one requiring one named alike (`core.made_up_for_all`: "id" said for none, nor "todo_id"), and
        where that was an id and no tool left reads (asked a new thing: none is left), the tools of its kind that find
        one (that make the thing: `core.look_up_first`, in any part of the server's table); where the message asks to
        make a new thing, not one that only reads (`core.new_not_read`: no id to find first); never one of a kind of
        change not asked (`core.kind_asked`, `core.change_asked`)."""
        if d.calls or d.retried or refused not in d.names:
            return None
        alike, tool = set(map(last_word, made_up)), d.names[refused]
        passed = {refused} | {n for n, t in d.names.items() if deprecated_for(t) == refused
                              or alike & set(map(last_word, t.required))}
        if new := not d.talk.again and asks_change(d.talk.last, new=True):
            passed |= {n for n, t in d.names.items() if reads(t, d.table)}
        passed |= {n for n, t in d.names.items() if not kind_asked(t, d.talk.last) or not (  # nor one `which` refuses
            d.narrowed or d.shaped or change_asked(t, d.talk.last, d.table))}
        left = {n: t for n, t in d.names.items() if n not in passed}
        if (ids := alike & IDS) and not any(reads(t, d.tools) != new for t in left.values()) and (
                found := look_ups(d.tools, tool, ids, new)):  # an id no one said: a tool of its kind that finds it,
            left, d.narrowed = {t.name: t for t in found}, True  # or for a new thing one that makes it
            d.notes.append("core.look_up_first")
        elif len(d.names) - sum(deprecated_for(t) == refused for t in d.names.values()) < 2:
            return None
        d.retried, d.names, d.notes = True, left, d.notes + ["core.new_not_read"] * new
        both = agreed([r for r in d.ranked if r.tool.name in d.names]) if len(d.names) > 1 else None
        if both is not None:
            d.names = {both.name: both}
        d.notes.append("core.agreed" if both else "core.next_name")
        return self.which

    # --- 4. arguments ----------------------------------------------------------------------------------------

    async def arguments(self, d: Decision) -> Stage | None:
        tool = d.names[d.name]
        written = d.written + d.name + (await self.model.call_format()).between
        bounds, same = bounds_for(d.said), [c.arguments for c in d.calls if c.name == tool.name]
        texts = [len(v) for a in same for v in a.values() if isinstance(v, str)]  # a tool again: texts of its kind
        longest = max([SHORT_STRING, *texts]) if same else None
        now = said_in([d.query, *d.talk.texts(turn=True)])  # optional values: said for this request; switches: asked
        asked = said_in([d.query])  # the person's words for this request alone
        leave = dropped_whatever(tool, now, asked)  # (`grounded` below) not written at all
        raw = await self.model.arguments(written, tool, bounds, longest, leave) if tool.parameters else "{}"
        try:
            arguments = json.loads(raw)
            if isinstance(arguments, dict):
                arguments |= await self.model.values_asked(written, tool, raw, d.talk.last, bounds)
            arguments = coerce_arguments(tool.input_schema, arguments)
        except (json.JSONDecodeError, BadArguments) as error:
            if d.calls or d.retried:  # a try past what the model wrote itself: no call
                return None
            raise MalformedToolCall(f"the arguments for {tool.name} do not fit its schema: {error}", raw) from None
        arguments = direction_said(choice_said(tool, as_said(tool, arguments, d.said), d.said, asked), d.talk.last)
        arguments = ids_as_listed(tool, named_as_called(tool, arguments, d.talk.last),
                                  [a.answer for a in d.talk.answered if not a.failed], d.talk.last)
        call: ToolCall | None = ToolCall(tool.name, grounded(tool, arguments, now, asked, d.said))
        for shape in d.shapes:
            if call is not None:
                call = await shape.amend(d, call, self.model, written)
        made_up = invented(tool, call.arguments, d.said) if call is not None else []  # (none where no call)
        for rule, mend in (("core.default_stated", as_defaults), ("core.held_as_named", partial(
                held_for, message=d.talk.last))):  # every made-up value the parameter's default, else a thing held
            if call is not None and made_up and (fixed := mend(tool, call.arguments, made_up)) != call.arguments:
                call, made_up, d.notes = ToolCall(call.name, fixed, call.id), [], [*d.notes, rule]
        logger.info("TOOLUSE_ARGUMENTS {} {}{}", tool.name, "refused" if call is None else f"{len(raw)} chars", "".join(
            f"{', ' if i else '; made up: '}{n}={str(call.arguments[n])[:60]!r}" for i, n in enumerate(made_up)))
        if call is None or made_up or d.far(call, MEANING_FLOOR):
            return self._retry(d, tool.name, made_up)
        d.call = call
        return self.mend if d.talk.again else self.more

    # --- 5. mend ---------------------------------------------------------------------------------------------

    async def mend(self, d: Decision) -> Stage | None:
        assert d.call is not None
        found = to_mend(d.call, d.talk, {t.name for t in d.tools if reads(t, d.tools)})
        if found is None:
            return self.more
        call, error, tried = found
        tool, form = d.names[call.name], await self.model.call_format()
        mended = await another_value(self.model, d.written + call.name + form.between, call, error, tried,
                                     lambda c: not invented(tool, c.arguments, d.said))
        if mended is None:  # its next likeliest tool, as the error may ask ("use git_add first")
            return self._retry(d, call.name)
        d.call, d.notes = mended, [*d.notes, "core.mend"]
        return self.more

    # --- 6. more ---------------------------------------------------------------------------------------------

    async def more(self, d: Decision) -> Stage | None:
        call, tool = d.call, d.names[d.call.name] if d.call else None
        assert call is not None and tool is not None
        if any(c.name == call.name and c.arguments == call.arguments for c in d.calls):
            return None
        if d.calls and not await self._asked_for(call, tool, d):
            logger.info("TOOLUSE_MORE {} not kept: the message does not ask for it", call.name)
            return None
        d.calls.append(call)
        d.written += (form := await self.model.call_format()).call_text(call.name, call.arguments)
        if len(d.calls) >= MAX_CALLS:
            return None
        if not (d.talk.again or d.talk.asks_several):  # one thing asked, before results: its call is the answer
            logger.info("TOOLUSE_MORE after {}: one thing is asked", call.name)
            return None
        goes_on = await self.model.goes_on(d.written)
        logger.info("TOOLUSE_MORE after {}: {}", call.name, "another call" if goes_on else "the model stops")
        if not goes_on:
            if d.talk.again or not d.talk.asks_several:
                return None
            # one call written where several values are asked: one more of a tool called (`_asked_for` ends it)
            d.names = {c.name: d.names[c.name] for c in d.calls if c.name in d.names}
        d.written += form.separator
        return self.which

    async def _asked_for(self, call: ToolCall, tool: Tool, d: Decision) -> bool:
        """Whether a call after the answer's first is one more thing the message asks: of a tool called before in
        the answer, one of its new values at least the message mentions (a text or an object, by a word no earlier
        call wrote in that parameter), the others too or they are the tool's own words (`own_word`: "weight", "lb"),
        and no earlier call holds one in the same parameter, or the whole of its own there (a list written whole is
        not written in parts, nor a text written again with more words); of another tool, its required values said
        (or its folder), and the model's yes."""
        asked = said_in([d.talk.last])
        same = [c.arguments for c in d.calls if c.name == call.name]
        if same:
            new = {k: v for k, v in call.arguments.items() if all(v != s.get(k) for s in same)}
            held = any(isinstance(v, str) and isinstance(s.get(k), str) and (v.casefold() in s[k].casefold() or s[
                k].strip() and s[k].casefold() in v.casefold()) for k, v in new.items() for s in same)  # a part of
            # what an earlier call wrote there, or all of it with more words: the same thing again
            words = set(telling_words(d.talk.last))  # a text: by a word of the message no earlier call put there
            said = [k for k, v in new.items() if mentioned(v, asked, k) and not isinstance(v, bool) and (
                not isinstance(v, (str, dict)) or set(telling_words(str(v))) & words - {
                    w for s in same for w in telling_words(str(s.get(k, "")))})]  # a text or an object: a new word
            return bool(said) and not held and all(k in said or own_word(tool, k, v) for k, v in new.items())
        places = {p.rstrip("/") for p in tool.places}
        values_said = all(mentioned(call.arguments[n], asked, n) or str(call.arguments[n]).rstrip("/") in places
                          for n in tool.required if n in call.arguments)
        return values_said and await self.model.fits(tool, d.talk.last, self.fit)
