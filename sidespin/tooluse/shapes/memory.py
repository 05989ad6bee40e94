"""The `memory` shape: stores of what the person said to keep (`stores`); classes and evidence: docs/tool-use-rules.md.

- `memory.asked`: asking to remember, recall or forget (`asks_memory`, or a store addressed: "save this in your
  knowledge base"), asking about the person where a store's tool ranks first or no tool shares a word with it, or
  asking about what a call of the conversation gave a store to keep, reads its table and, whatever the call's chance,
  names its tool that adds, reads or deletes (by the store's annotations, else by its names' verbs: `does`); where
  its deleting tools take an id, beside them its reading tools that take none, to find what to forget.
- `memory.kept_as_said`: a call keeping what the message asks to keep, whose texts hold under two thirds of its
  telling words ("Remember that the code for the practice room is 7731" kept as `music_school`: `7731`), has its
  value's text be the words asked to keep (of a list of objects, each object's: `entities[].observations`)."""

from __future__ import annotations

import json
import re
from typing import Sequence

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.decision import Decision, Shape
from sidespin.tooluse.model import Model
from sidespin.tooluse.values import READ_VERBS, last_word, telling_words, words_of

__all__ = ["Memory", "stores", "asks_memory", "does"]

_STORE = re.compile(r"(?i)\b(?:memor(?:y|ies)|remember\w*|knowledge[ _-]?(?:graph|base)|kb)\b")
_ASKED = r"(?:^|[.!?;:,]\s*|\b(?:please|can you|could you|would you|will you|i want you to|i'd like you to)\s+)"
_KEEP = re.compile(r"(?i)(?:" + _ASKED + r"(?:remember|memori[sz]e|note that|(?:guarda|gu[áa]rdame|enregistre|"
                   r"sauvegarde|speichere?|salva)\b[^.!?]{0,20}?\b(?:que|dass|che))\b|"  # "guarda también que …"
                   r"\b(?:keep in mind|don'?t forget|do not forget|for later|for future reference|merk\w* (?:dir|es)|"
                   r"vergiss \w*\s*nicht|souviens|retiens|n'oublie pas|garde en t[êe]te|recuerda|acu[ée]rdate|"
                   r"no olvides|ten en cuenta|ricorda\w*|non dimenticare|tieni a mente)\b)")
_RECALL = re.compile(r"(?i)\b(?:do you (?:still )?(?:remember|recall|know)|what do you know|you know about|"
                     r"i (?:told|tell) you|i (?:have |had )?(?:mentioned|said)|weißt du|erinnerst du|dir \w*\s*gesagt|"
                     r"je t'ai dit|te l'ai dit|que (?:tu sais|sais-tu)|tu te souviens|te (?:lo )?dije|qué sabes|"
                     r"te acuerdas|ti (?:l'ho|ho) detto|cosa sai|ti ricordi)\b")
_ABOUT_ME = re.compile(r"(?i)\b(?:what|what's|where|when|who|which|how)\b.*\b(?:my|mine)\b|"
                       r"\b(?:quel(?:le)?s?|où|quand|qui|comment)\b.*\b(?:mon|ma|mes)\b|"
                       r"\b(?:was|wo|wann|wer|wie|welche\w*)\b.*\bmein\w*\b|"
                       r"(?:qu[ée]|cu[áa]l|d[óo]nde|cu[áa]ndo|qui[ée]n|c[óo]mo)\b.*\b(?:mi|mis)\b")
_VERBS = {"recall": READ_VERBS | {"recall", "look", "check"},
          "keep": {"save", "add", "create", "store", "remember", "write", "put", "insert", "upsert", "append", "new"},
          "forget": {"delete", "remove", "forget", "erase", "clear", "drop"}}
_ADDRESSED = re.compile(r"(?i)\b(?:(?:your|in|into|to|from)\s+(?:the\s+|your\s+)?(?:long[- ]term\s+)?(?:memory|"
                        r"knowledge[ _-]?(?:graph|base)|kb)|the\s+(?:knowledge[ _-]?(?:graph|base)|kb))\b")
_QUESTION = re.compile(r"(?i)\?|^\W*(?:what|where|when|who|which|how|tell|show)\b")
_VALUES = frozenset("value content contents text fact observation memory note body information data".split())
_FORGET = re.compile(r"(?i)" + _ASKED + r"(?:forget|vergiss|oublie|olvida|dimentica)\b(?!\s*(?:nicht|pas)\b)")


def stores(tool: Tool) -> bool:
    """Whether a tool's name, description or server speaks of memory or a knowledge graph or base ("KB")."""
    server = tool.source.split(":", 1)[1] if tool.source.startswith("mcp:") else ""
    return bool(_STORE.search(f"{server} {tool.name.replace('_', ' ')} {tool.description[:200]}"))


def does(tool: Tool, annotated: bool) -> str | None:
    """What a store's tool does: "forget", "recall" or "keep", by its annotations where its store's tools carry
    some, else by its name's verbs (`search_entries`, `save`, `delete`); None where it says none."""
    if annotated:
        return "forget" if tool.destructive else "recall" if tool.read_only else "keep"
    words = set(words_of(tool.name))
    return next((kind for kind, verbs in _VERBS.items() if words & verbs), None)


def asks_memory(text: str) -> str | None:
    """What a message asks of a memory: "forget", "recall", "keep", or None. Of a store it addresses ("in your
    memory", "the knowledge base"): what its first verb naming a store's tool does, else "recall" for a question."""
    text = text.strip()
    if _FORGET.search(text) and not _KEEP.search(text):
        return "forget"
    if not _RECALL.search(text) and not _KEEP.search(text) and _ADDRESSED.search(text):  # a store addressed
        verbs = (next((k for k, v in _VERBS.items() if w in v - {"new"}), None) for w in words_of(text))
        return next((kind for kind in verbs if kind), "recall" if _QUESTION.search(text) else None)
    return "recall" if _RECALL.search(text) else "keep" if _KEEP.search(text) else None


class Memory(Shape):
    id = "memory"
    floor = 0.0

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(stores(tool) for tool in tools)

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        return "memory.asked" if self._asked(decision) and self.applies(tools) else None

    @staticmethod
    def _asked(decision: Decision) -> str | None:
        """What the last message asks of a memory (`asks_memory`; "recall" for a question of the person or of what
        a store was given)."""
        text, ranked = decision.talk.last, decision.ranked
        if (asked := asks_memory(text)) is None and _QUESTION.search(text) and _kept_before(decision):
            return "recall"
        if asked is None and _ABOUT_ME.search(text) and ranked:
            alone = all(r.bm25 is None for r in ranked)  # no tool shares a word with it: it is the person's
            return "recall" if alone or (ranked[0].score > 0 and stores(ranked[0].tool)) else None
        return asked

    def narrow(self, decision: Decision) -> dict[str, Tool]:
        if (asked := self._asked(decision)) is None or decision.talk.again:
            return decision.names
        annotated = any(t.read_only or t.destructive for t in decision.names.values() if stores(t))
        kept = {n: t for n, t in decision.names.items() if stores(t) and does(t, annotated) == asked}
        if asked == "forget" and kept and all(map(_by_id, kept.values())):  # what to forget is found first
            kept |= {n: t for n, t in decision.names.items()
                     if stores(t) and does(t, annotated) == "recall" and not _by_id(t)}
        if kept and len(kept) < len(decision.names):
            decision.notes.append("memory.asked")
            return kept
        return decision.names


    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        """A keeping call whose texts hold under two thirds of the telling words of what the message asks to keep
        has its value's text (a parameter named for one: `value`, `content`, `fact`…) be those words, as said."""
        tool, kept = decision.names[call.name], _to_keep(decision.talk.last)
        annotated = any(t.read_only or t.destructive for t in decision.tools if t.source == tool.source)
        fields = [n for n, schema in tool.parameters.items() if _a_value(n, schema)]
        lists = {n: f for n, f in _lists_of_values(tool).items() if isinstance(call.arguments.get(n), list)}
        if not kept or not (fields or lists) or not stores(tool) or does(tool, annotated) != "keep":
            return call
        asked, held = _words(kept), _words(json.dumps(call.arguments, ensure_ascii=False))
        if len(asked & held) * 3 >= len(asked) * 2:
            return call
        decision.notes.append("memory.kept_as_said")
        if fields:
            return ToolCall(call.name, {**call.arguments, fields[0]: _as(tool.parameters[fields[0]], kept)}, call.id)
        name, (field, schema) = next(iter(lists.items()))  # each object of the list: its value the words kept
        return ToolCall(call.name, {**call.arguments, name: [{**o, field: _as(schema, kept)} if isinstance(o, dict)
                                                            else o for o in call.arguments[name]]}, call.id)


def _a_value(name: str, schema: object) -> bool:
    """Whether a parameter holds what is kept: named for a value (`value`, `content`, `observations`…), a text or a
    list of texts."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    return last_word(name) in _VALUES and (kind == "string" or kind == "array" and (
        (schema.get("items") or {}).get("type") == "string"))


def _as(schema: dict, text: str) -> str | list[str]:
    """`text` as a parameter of `schema` takes it: a list of one text where it takes a list."""
    return [text] if schema.get("type") == "array" else text


def _lists_of_values(tool: Tool) -> dict[str, tuple[str, dict]]:
    """The parameters that are lists of objects holding a value (`entities` of objects with `observations`), each
    with the name and schema of its objects' first field that holds one."""
    found = {}
    for name, schema in tool.parameters.items():
        items = (schema.get("items") or {}) if isinstance(schema, dict) and schema.get("type") == "array" else {}
        fields = [(n, s) for n, s in (items.get("properties") or {}).items() if _a_value(n, s)]
        if fields:
            found[name] = fields[0]
    return found


def _words(text: str) -> set[str]:
    """The telling words of a text, its numbers too ("4412")."""
    return set(telling_words(text)) | set(re.findall(r"\d+", text))


def _to_keep(message: str) -> str | None:
    """What a message asks to keep: its words after the asking ("Remember that …", "Guarda también que …")."""
    found = _KEEP.search(message)
    rest = message[found.end():] if found else ""
    rest = re.sub(r"(?i)^(?:\W*\b(?:that|que|dass|che|this|ceci|esto|questo|please|bitte|por favor|per favore)\b)+",
                  "", rest).strip(" ,:;.!?")
    return rest if len(telling_words(rest)) >= 2 else None


def _by_id(tool: Tool) -> bool:
    """Whether a tool requires an id ("id", "entry_ids")."""
    return any(last_word(name) == "id" for name in tool.required)


def _kept_before(decision: Decision) -> bool:
    """Whether the last message shares a telling word with what a call of the conversation gave a store to keep."""
    tools = {t.name: t for t in decision.tools if stores(t)}
    annotated = any(t.read_only or t.destructive for t in tools.values())
    asked = set(telling_words(decision.talk.last))
    return any(a.name in tools and does(tools[a.name], annotated) == "keep"
               and asked & set(telling_words(json.dumps(a.arguments, ensure_ascii=False)))
               for a in decision.talk.answered)
