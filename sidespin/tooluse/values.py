"""Which of a call's values the conversation said: the rules that keep a small model from making values up.

- `said_in`: every text and earlier call's arguments, lower case, with number words, twelve-hour times, decimal
  commas, scaled numbers ("two" 2, "3 PM" 15:00, "12,5" 12.5, "5%" or "5 Prozent" 0.05, "2 million" 2000000) and
  words without their accents also written.
- `mentioned`: a number said as a number (1 is not in "10"); a text by one of its words, but a placeholder or an
  e-mail only whole, a web address by its host, a file's name with its extension; a switch by its parameter's name;
  a list when all its items are; an object when any of its values is.
- `grounded` drops optional values not said for this request (its message, the one before for a follow-up, the turn's
  results; a switch, the person's words alone: `core.optional_now`); `asked_parameters` names optional ones asked for.
- `invented`: required values nothing mentions (neither the conversation nor the tool's own text and folders),
  that restate their parameter's description, that are an example of the tool's text no one said, that copy a
  parameter's name or a JSON type no one said (`{"name": "content"}`), a phrase as an id (`{"id": "Renew it"}`), or
  an id or a key a reading tool looks up that no one said whole nor a server holds (`{"key": "mum_birthday"}`).
(Numbers written as said, values a schema allows or defaults to: `schema`.)"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any, Sequence

from loguru import logger

from sidespin.tools import Tool

__all__ = ["IDS", "MONTHS", "said_in", "numbers_said", "mentioned", "grounded", "asked_parameters", "invented",
           "whole_in", "named_as_called", "CALLED", "words_of", "last_word", "telling_words", "allowed", "REQUEST_AT",
           "REQUEST_LEADS", "asks_change", "change_asked", "reads", "asks_question", "kind_asked", "READ_VERBS",
           "own_word", "QUOTED", "THOUSANDS", "STOP"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_JOINED = re.compile(r"(?i)\b(to|re|co|[a-z])-([a-z]{2,4})\b")
# function words: they match every description and tell no tool from another
STOP = frozenset("""a an and are as at be but by can could do does for from have how i in is it its me my of on or
please so that the their them then there these this to was we what when where which who will with would you your
now same just some any all also get give tell show let lets want need about many much more most like know
le la les un une des du de et ou je tu il elle nous vous mon ma mes ton ta tes est sont que qui quoi dans pour sur avec
au aux ce cette ces moi der die das den dem des ein eine einen einem einer und oder ich du er sie es wir ihr mir mich
dir dich mein meine meinen ist sind habe was wie wo wann wer mit von zu auf im el los las una unos unas yo mi mis
qué en con por para del al lo te se""".split())  # of English, French, German, Spanish; no English noun ("son", "hat")
_NUMBER_WORDS = {word: str(n) for words in (  # from 2 in the other languages: their 1 is their article ("un", "eine")
    "zero one two three four five six seven eight nine ten eleven twelve",
    "_ _ deux trois quatre cinq six sept huit neuf dix onze douze",
    "_ _ zwei drei vier fünf sechs sieben acht neun zehn elf zwölf",
    "_ _ dos tres cuatro cinco seis siete ocho nueve diez _ doce",  # "once" is English
    "_ _ _ tre quattro cinque _ sette otto nove dieci undici dodici") for n, word in enumerate(words.split())
    if word != "_"} | {
    "twenty": "20", "vingt": "20", "zwanzig": "20", "veinte": "20", "venti": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "hundred": "100", "dozen": "12", "twice": "2", "once": "1", "single": "1", "pair": "2",
    "couple": "2"}  # Italian "due" and "sei" are English and German words
_TWELVE_HOUR = re.compile(r"\b(1[0-2]|0?[1-9])(?:[:.]([0-5]\d))?\s?([ap])\.?m\b")
_SCALED = re.compile(r"(\d+(?:\.\d+)?)\s?(%|percent\b|per cent\b|prozent\b|pour ?cent\b|por ?ciento\b|thousand\b|"
                     r"million\b|billion\b|k\b)")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "k": 1e3}  # any other: a percentage
_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d+),(\d{1,2})(?![\d,])")  # "12,5": 12.5 (three digits: thousands)
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e-?\d+)?")
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # a comma between digits as a thousands separator
_PLACEHOLDER = re.compile(r"(?i)(?<![a-z])your[-_/]|/your(?![a-z])|/path/to/|^\s*<[^<>]+>\s*$|"
                          r"^\s*your( [a-z]+){1,2}\s*$|^\s*(?:[a-z0-9]+_)+(?:name|id|path|key|value|here|token)\s*$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")
_URL = re.compile(r"^\s*[a-z][a-z0-9+.-]*://(?:[^/\s?#@]*@)?([^/\s?#@:]+)", re.IGNORECASE)
_FILE_NAME = re.compile(r"^(?:[/~.][^@]*|[^\s@]*)[^\s/@.]\.([A-Za-z][A-Za-z0-9]{0,4})$")
_FORMATS = {"md": "markdown", "txt": "text texte texto testo", "py": "python", "js": "javascript", "ts": "typescript",
            "yml": "yaml", "htm": "html", "jpg": "jpeg"}  # an extension said by its format's name
_SWITCH = frozenset({"true", "false", "yes", "no"})
_CODE = re.compile(r"[A-Z]{2,4}")
_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})
MONTHS = ("january|february|march|april|may|june|july|august|september|october|november|december|"
          "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|"
          "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
          "januar|februar|märz|juni|juli|oktober|dezember")  # a regex's alternatives, in four languages
IDS = frozenset({"id", "uuid", "guid", "key"})  # a parameter's last word that names a thing for a tool, not a person
CALLED = re.compile(r"""(?i)\b(?:called|named|titled|appel[ée]e?|nomm[ée]e?|intitul[ée]e?|llamad[oa]|titulad[oa]|"""
                     r"""genannt|namens|chiamat[oa])\s+(?:"([^"\n]+)"|'([^'\n]+)'|“([^”\n]+)”|«\s?([^»\n]+?)\s?»|"""
                     r"""(\w[\w.-]*\w))""")  # a thing called by its name: quoted, or one word ("packing-for-oslo")
_SCHEMA_WORDS = frozenset({"anyOf", "oneOf", "allOf", "additionalProperties", "$ref", "$schema"})
_EXAMPLES = re.compile(r"(?i)(?:\b(?:such as|for example|for instance|example|like)\b|\be\.g\.|\beg\.)\W{0,4}"
                       r"((?:['\"][^'\"\n]{1,80}['\"](?:\s*(?:,|or|and|,\s*or)\s*)?)+)")
_QUOTED = re.compile(r"['\"]([^'\"\n]{1,80})['\"]")
QUOTED = re.compile(r'"([^"\n]{1,200})"|“([^”\n]{1,200})”|«\s?([^»\n]{1,200}?)\s?»'
                    r"|(?<![^\W_])'([^'\n]{1,200})'(?![^\W_])")  # a text quoted in a message: what is written

def words_of(text: str) -> list[str]:
    """The words of a name or a sentence, lower case: `getCurrentWeather` → get current weather; a word hyphenated
    after a function word or a letter is one ("to-do" → todo, "e-mail" → email)."""
    return [w.lower() for w in _WORD.findall(_JOINED.sub(r"\1\2", _CAMEL.sub(" ", text)))]


def last_word(name: str) -> str:
    """The last word of a parameter's name, singular: what it names ("entry_ids" → id, "todoId" → id, "q" → q)."""
    word = (words_of(name) or [name.lower()])[-1]
    return word[:-1] if len(word) > 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def telling_words(text: str) -> list[str]:
    """`words_of` the text but function words and single letters."""
    return [w for w in words_of(text) if w not in STOP and len(w) > 1]


# where a request's verb stands: first in a clause, or after "please", "can you", "to", "and", "then"…
REQUEST_LEADS = ("please", "you", "and", "then", "also", "now", "et", "puis", "tu", "vous", "bitte", "und", "dann",
                 "du", "y", "luego", "usted", "e", "poi")  # words a request's verb follows ("to" aside: an infinitive)
REQUEST_AT = rf"(?i)(?:^|[.!?;:,«\"]\s*|\b(?:please|you|to|{'|'.join(REQUEST_LEADS[2:])})\s+)"
_NEW = (r"(?:create|make|write|save|add|append|insert|put|cr[ée]e[rz]?|[ée]cri[st]|[ée]crire|ajoute[rz]?|erstelle|"
        r"schreib\w*|f[üu]ge|speicher\w*|crea[r]?|escribe|a[ñn]ade|guarda|scrivi|aggiungi|salva|register|enrol\w*|"
        r"inscri\w*|registriere|registra\w*)")  # of a new thing ("register a new server")
_CHANGE = (rf"(?:{_NEW}|set|change|replace|overwrite|edit|update|delete|remove|rename|move|copy|stage|commit|push|"
           r"export|import|upload|rewrite|fix|mark|complete|finish|close|archive|cancel|clear|reset|restore|enable|disable|toggle|"
           r"start|stop|pause|resume|marque[rz]?|termine[rz]?|annule[rz]?|markiere|erledige|marca|completa|cancela|"
           r"segna|modifie[rz]?|supprime[rz]?|renomme[rz]?|d[ée]place[rz]?|[äa]ndere|l[öo]sche|entferne|cambia|borra|"
           r"elimina|mueve|sposta)")
# a change said by the way an amount goes ("raise it by 5", "actualiza el stock"): asked by a message, never said by a
# tool's opening ("Returns the lower bound")
_ADJUST = (r"(?:raise|lower|increase|decrease|reduce|cut|trim|bump|adjust|augmente[rz]?|baisse[rz]?|r[ée]dui[st]|mets|"
           r"erh[öo]he|senke|reduziere|aktualisiere|actualiza|sube|baja|aumenta|aggiorna|riduci)")

_DELETES = re.compile(r"(?i)\b(?:delete|remove|erase|drop|clear|clean|purge|wipe|forget|discard|supprime[rz]?|"
                      r"efface[rz]?|oublie[rz]?|l[öo]sche\w*|entferne\w*|vergiss|borra|elimina|quita|olvida|cancella|"
                      r"rimuovi|dimentica)")
_DELETING = frozenset("delete remove erase drop clear purge wipe destroy forget unset del rm trash discard".split())
_MAKING = frozenset("create new make init".split())
_NEW_THING = re.compile(r"(?i)\b(?:new|set up|nouvel\w*|nouveau|neue\w*|nuev[oa]s?|nuov[oa])\b")  # "set up a new …"
_READS = re.compile(r"(?i)\b(?:list|read|get|show|search|find|view)(?:s|ing)?\b")
_ASKS_YOU = re.compile(r"(?i)\b(?:can|could|would|will)\s+(?:you|u)\b|\bplease\b|\b(?:peux|pouvez|kannst|können|"
                      r"puedes|puede|potresti)\b")  # a question that asks for a thing done
_EXECUTES = frozenset("execute exec run".split())  # a tool running a language may change anything it reaches
READ_VERBS = frozenset("get list read search find show view query fetch lookup retrieve describe count".split())


def reads(tool: Tool, tools: Sequence[Tool], *, actions: bool = False, runs: bool = False) -> bool:
    """Whether `tool` only reads: it is marked read-only; where its server marks none of its tools (among `tools`),
    its name says a reading verb and no change nor a run (`read_files`, `todo_list`; not `list_and_delete`, nor
    `execute_sql_query`), or, with `actions`, one of its actions reads (`_actions`: "create, list, or delete",
    "list_roots"), or, with `runs`, it runs what it is given (`execute_query(query)`: a query may read)."""
    if tool.read_only or any(t.read_only or t.destructive for t in tools if t.source == tool.source):
        return tool.read_only
    words = words_of(tool.name)
    return bool(READ_VERBS & set(words) and not _EXECUTES & set(words)) and not re.search(rf"\b{_CHANGE}\b", " ".join(
        words)) or actions and bool(_READS.search(_actions(tool))) or runs and bool(_EXECUTES & set(words)) and bool(
        tool.required)


def _actions(tool: Tool) -> str:
    """What a tool says it does: its name's words, its description's first sentence and the actions its description
    names as identifiers ("list_roots"); not a verb further on ("formulas using it will show #NAME?")."""
    first = re.split(r"(?<=[.;!?])\s", " ".join(tool.description.split()), maxsplit=1)[0]
    named = re.findall(r"\b[a-z]+(?:_[a-z]+)+\b|\b[a-z]+(?:[A-Z][a-z]+)+\b", tool.description[:600])
    return " ".join([*words_of(tool.name), first[:300], *(" ".join(words_of(n)) for n in named)])


def asks_change(text: str, new: bool = False) -> bool:
    """Whether a message asks to make or change something (with `new`, to make a new thing: "add", not "mark"): a
    change's verb, or an amount's direction ("raise", "lower", "actualiza"), where a request's verb stands ("what is it
    set to?", "is it lower than 5?" ask none)."""
    return re.search(REQUEST_AT + (_NEW if new else f"(?:{_CHANGE}|{_ADJUST})") + r"\b", text) is not None


def change_asked(tool: Tool, message: str, table: Sequence[Tool] = ()) -> bool:
    """Whether `tool` may open an answer to `message` (`core.change_asked`): it is marked read-only, its opening names
    no change ("Adds…", "INSERT") or a reading too, or the message asks one or, no question but one asking you ("What
    changed in the last commit?" is one), shares a word (first five letters) with what the tool says it does
    (`_actions`) or its parameters (their notes, their allowed values), but one every name of its `table` says ("note"
    of `add_note`); not a word further on in its description ("tables get new names" is no "table for two")."""
    opening, own = f"{' '.join(words_of(tool.name))} {tool.description}"[:300], _actions(tool)
    if tool.read_only or not re.search(r"(?i)\b" + _CHANGE + r"(?:s|es|d|ed)?\b", opening) or asks_change(message) or (
            _READS.search(own)):  # one of its actions reads ("list_roots")
        return True
    own += json.dumps(tool.input_schema, ensure_ascii=False)
    common = set.intersection(*({w[:5] for w in words_of(t.name)} for t in table)) if len(table) > 1 else set()
    shared = {w[:5] for w in telling_words(own)} & {w[:5] for w in telling_words(message)} - common
    return bool(shared) and not asks_question(message)


def kind_asked(tool: Tool, message: str) -> bool:
    """Whether `message` asks the kind of change `tool`'s name says (`core.kind_asked`): a tool that deletes, a deletion
    (a verb of one in five languages); a tool that makes a new thing, no change but a new thing ("change the price"
    is no `create_workbook`; "Set up a new account" is one). Any other tool: True."""
    words = set(words_of(tool.name))
    if words & _DELETING:
        return _DELETES.search(message) is not None
    return not words & _MAKING or not asks_change(message) or asks_change(message, new=True) or _NEW_THING.search(
        message) is not None


def asks_question(message: str) -> bool:
    """Whether a message asks a question to know (a sentence of it ends with "?"; "How much…? It's in my budget."),
    not for a thing done ("could you…", "please")."""
    return re.search(r"\?(?:\s|$)", message) is not None and not _ASKS_YOU.search(message)


def said_in(texts: Sequence[str]) -> str:
    """Everything said, lower case, with the forms the module's rules list for `said_in` also written."""
    said = "\n".join(texts).lower()
    plain = unicodedata.normalize("NFKD", said).encode("ascii", "ignore").decode()
    derived = [w for w in _WORD.findall(plain) if w not in said]
    derived += [_NUMBER_WORDS[w] for w in _WORD.findall(said) if w in _NUMBER_WORDS]
    derived += [f"{int(hour) % 12 + (12 if half == 'p' else 0):02d}:{minutes or '00'}"
                for hour, minutes, half in _TWELVE_HOUR.findall(said)]
    derived += [f"{whole}.{part}" for whole, part in _DECIMAL_COMMA.findall(said)]
    derived += [f"{float(number) * _SCALE.get(scale, 1e-2):.12g}"
                for number, scale in _SCALED.findall(THOUSANDS.sub("", _DECIMAL_COMMA.sub(r"\1.\2", said)))]
    return said + ("\n" + " ".join(derived) if derived else "")


def numbers_said(said: str) -> set[float]:
    """The numbers written in `said`, a comma between digits read as a thousands separator."""
    return {float(n) for n in _NUMBER.findall(THOUSANDS.sub("", said))}


def whole_in(text: str, said: str) -> bool:
    """Whether `said` has `text` with no letter or digit on either side."""
    return re.search(rf"(?<![^\W_]){re.escape(text)}(?![^\W_])", said) is not None


def mentioned(value: Any, said: str, name: str = "") -> bool:
    """Whether the conversation (`said`, from `said_in`) mentions `value`, the value of parameter `name`: a text by one
    of its telling words, a word of 6 letters or more by all but its last three ("kilometers" of "kilometres")."""
    if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in _SWITCH):
        return any(word[:5] in said for word in words_of(name) if len(word) >= 4)  # a switch, by its name
    if isinstance(value, (int, float)):
        return any(math.isclose(abs(value), n, rel_tol=1e-9) for n in numbers_said(said))
    if isinstance(value, list):
        return bool(value) and all(mentioned(item, said, name) for item in value)
    if isinstance(value, dict):
        return any(mentioned(item, said, key) for key, item in value.items())
    if not isinstance(value, str):
        return value is None
    text = value.strip()
    if _PLACEHOLDER.search(text) or _EMAIL.match(text):
        return text.lower() in said
    if (address := _URL.match(text)) is not None:
        return address.group(1).lower() in said
    if (file := _FILE_NAME.match(text)) is not None and not _extension_said(file.group(1).lower(), said):
        return False  # a file's name with an extension no one said, nor its format's name
    if text and not _WORD.search(text):
        return text in said
    words = [w for w in _WORD.findall(text.lower()) if len(w) >= 3 or w.isdigit()]
    telling = [w for w in words if w not in STOP] or words
    return not telling or any(w in said or (len(w) >= 6 and w[:max(5, len(w) - 3)] in said) or _extension_said(
        w, said) for w in telling)


def _extension_said(extension: str, said: str) -> bool:
    """Whether `said` has a file's extension as a whole word, or the name of its format (`_FORMATS`: "markdown")."""
    return any(whole_in(w, said) for w in [extension, *_FORMATS.get(extension, "").split()])


def allowed(schema: Any) -> list[str]:
    """The texts a parameter's schema allows, when it lists them (itself, or its items')."""
    if not isinstance(schema, dict):
        return []
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    return [v for v in schema.get("enum") or items.get("enum") or [] if isinstance(v, str)]


def grounded(tool: Tool, arguments: dict[str, Any], said: str, asked: str | None = None,
             told: str = "") -> dict[str, Any]:
    """`arguments` without the optional values `said` never mentions (of an optional list, the items it mentions); a
    switch (a boolean) only where `asked`, the person's words, mentions it: a result's "pass overwrite=true" is none.
    Of a tool that changes things, a text of several words the conversation `told` (an earlier result) is kept: what
    it writes, not a filter ("Write their names into borrowers.txt")."""
    kept = {}
    for name, value in arguments.items():
        if name not in tool.required and isinstance(value, list) and len(value) > 1:
            value = [item for item in value if mentioned(item, said, name)] or value
        heard = asked if asked is not None and isinstance(value, bool) else said
        written = isinstance(value, str) and len(value.split()) >= 3 and not reads(tool, (tool,)) and mentioned(
            value, told, name)
        if name in tool.required or ((written or mentioned(value, heard, name)) and not _restates(tool, name, value)):
            kept[name] = value
        else:
            logger.info("TOOLUSE_ARGUMENT_DROPPED {}.{}: optional, and not said for this request", tool.name, name)
    return kept


def asked_parameters(tool: Tool, arguments: dict[str, Any], message: str) -> list[str]:
    """The optional parameters left out that `message` asks for: all words of the name ("sorted": sort), or a value."""
    said, lower = set(words_of(message)), message.lower()
    wanted = []
    for name, schema in tool.parameters.items():
        if name in tool.required or name in arguments or not isinstance(schema, dict):
            continue
        named = [w for w in words_of(name) if len(w) >= 3]
        if (named and all(any(s.startswith(w) and len(s) - len(w) <= 3 for s in said) for w in named)) or any(
                len(v) >= 3 and whole_in(v.lower(), lower) for v in allowed(schema)):
            wanted.append(name)
    return wanted


def invented(tool: Tool, arguments: dict[str, Any], said: str) -> list[str]:
    """The required parameters whose values are made up (`invented` in the module's rules)."""
    own = "\n".join([tool.description, *tool.places, json.dumps(tool.input_schema, ensure_ascii=False)]).lower()
    places = "\n".join([said, *tool.places, *tool.holds]).lower()  # where its server works, and what it holds
    made_up = []
    for name, value in ((name, arguments[name]) for name in tool.required if name in arguments):
        known = mentioned(value, places, name) or (isinstance(value, (int, float)) and not isinstance(value, bool)
                                                    and value == 0) or _all_in(value, own, name) or (
            isinstance(value, str) and _CODE.fullmatch(value) is not None)
        copied = _schema_like(value) or isinstance(value, str) and (value in tool.parameters or value in _TYPES) and (
            not mentioned(value, said))
        ids, kind = [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)], last_word(name)
        phrase = kind == "id" and any(" " in v.strip() for v in ids) or (  # no id is a phrase; one looked up is known
            kind in ("id", "key") and reads(tool, (tool,)) and not all(whole_in(v.lower(), places) for v in ids))
        if not known or copied or phrase or _restates(tool, name, value) or _an_example(tool, name, value, said):
            made_up.append(name)
    return made_up


def _schema_like(value: Any) -> bool:
    """Whether a value is (or holds) a JSON schema, as a model copies its tool's: `{"anyOf": [{"type": "object"}]}`."""
    if isinstance(value, list):
        return any(_schema_like(item) for item in value)
    return isinstance(value, dict) and (bool(_SCHEMA_WORDS & set(value)) or value.get("type") in _TYPES and len(
        value) == 1 or any(_schema_like(item) for item in value.values()))


def own_word(tool: Tool, name: str, value: Any) -> bool:
    """Whether a text value of parameter `name` is allowed by the tool's schema or said by its description ("lb")."""
    return isinstance(value, str) and (value in allowed(tool.parameters.get(name)) or _all_in(
        value, tool.description.lower(), name))


def _all_in(value: Any, text: str, name: str) -> bool:
    """Whether the tool's own text mentions a value: a text by all of its words, anything else as `mentioned` does."""
    words = [w for w in _WORD.findall(value.lower()) if len(w) >= 3 or w.isdigit()] if isinstance(value, str) else []
    return mentioned(value, text, name) and all(w in text for w in words)


def _restates(tool: Tool, name: str, value: Any) -> bool:
    """Whether a text is its parameter's own description, most of it, or the opening of the tool's description."""
    if not isinstance(value, str):
        return False
    written = " ".join(_WORD.findall(value.lower()))
    opening = " ".join(_WORD.findall(tool.description.lower()))
    if len(written.split()) >= 5 and opening.startswith(written[:max(30, len(written) // 2)]):
        return True
    schema = tool.parameters.get(name)
    described = schema.get("description") if isinstance(schema, dict) else None
    if not isinstance(described, str) or not written:
        return False
    meant = " ".join(_WORD.findall(described.lower()))
    words, meant_words = set(written.split()), set(meant.split())
    return written == meant or (len(written) > 8 and written in meant and len(written) > 0.6 * len(meant)) or (
        len(words) >= 4 and len(words & meant_words) >= 0.7 * len(words | meant_words))


def _an_example(tool: Tool, name: str, value: Any, said: str) -> bool:
    """Whether a text is an example the tool's text gives ("such as 'X'") that `said` does not mention."""
    if not isinstance(value, str) or allowed(tool.parameters.get(name)) or mentioned(value, said, name):
        return False
    texts = [tool.description, *(str(s.get("description") or "") for s in tool.parameters.values()
                                 if isinstance(s, dict))]
    examples = {q.strip().lower() for t in texts for listed in _EXAMPLES.findall(t) for q in _QUOTED.findall(listed)}
    return value.strip().lower() in examples


def named_as_called(tool: Tool, arguments: dict[str, Any], message: str) -> dict[str, Any]:
    """`arguments` with a text naming the thing (a parameter whose name ends in name or title) that the message does
    not say, where the message calls the thing by a name ("a note called packing-for-oslo", "intitulée « Courses »"):
    that name."""
    if (found := CALLED.search(message)) is None:
        return arguments
    called, fixed = next(group for group in found.groups() if group).strip(), dict(arguments)
    for name, value in arguments.items():
        if last_word(name) in ("name", "title") and isinstance(value, str) and not whole_in(
                value.strip().casefold(), message.casefold()):
            fixed[name] = called
            logger.info("TOOLUSE_VALUE_AS_SAID {}.{}: the name the message calls it by", tool.name, name)
    return fixed
