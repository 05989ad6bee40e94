"""What a conversation said, and which of a call's values come from it (for the route, `sidespin.route`).

The rules, before the code:

- **Said** (`said_in`): every message's text and every earlier call's arguments, in lower case,
  with number words also as digits ("two dice" says 2), twelve-hour times also on the 24-hour
  clock ("3 PM" says 15:00) and minutes and hours also in seconds ("3 minutes" says 180). Tool
  results are messages too, so a value read from a listing counts as said.
- **Mentioned** (`_mentioned`): a string whose words (three letters or more, or digits) appear in
  what was said, except a placeholder ("YOUR_API_KEY", "/path/to/your/files", "<token>") or an
  e-mail address ("adriel@example.com" for "Adriel"), which counts only when said whole (a
  tool's schema may give one as its default), or a file's name whose extension no one said
  ("/home/me/files/notes.txt" for "Which files are in the notes folder?": the 0.5B read a file it
  made up, failed, and answered that the folder held it; of BFCL's right answers, no file's name
  has an extension its question does not say); a number written in it as a number (1 is not in
  "10", 5000 is in "5,000"); a switch (also one written as the string 'True' or 'False') whose
  name's words appear; a list all of whose items are mentioned; an object with any mentioned value.
- **Optional values no one asked for are dropped** (`grounded`): a made-up filter silently
  changes what a tool returns. Of an optional list, the items no one mentioned are dropped; a text
  written for two parameters stays only in those the conversation names (`_named_elsewhere`).
- **A value is written as the message said it** (`sidespin.said_values.as_said`, before these rules): "5%" as
  0.05 for a tool that takes a decimal, the one time said for one no one said, a number that ran on cut back.
- **Optional values the message asks for are asked for** (`asked_parameters`): a parameter the call
  left out whose name the message says ("the full name" for `fullName`, 'for query "llama"' for
  `query`) or one of whose allowed values it says ("a seafood restaurant" for `cuisine`) is written
  after the others (the route asks the model for it). A small model closes its arguments early.
- **A call of invented required values is not made** (`invented`): neither the conversation nor
  the tool's own description and schema mention them.
- **A call after the first is kept only if the message asks for it** (`asked_for`): its values
  come from the message (each word of another tool's required text, `_all_said`; a word the earlier
  calls of its tool did not have, `_says_new`), and it takes the place of the earlier call of its tool
  when it only says what the message says where that one made it up (`corrects`).
- **A question is answered by tools that only read** (`reads_only`): when the message asks
  something ("What is my sister's name?") rather than asks for something ("Can you add …?",
  "Add …"), a tool its server marks as changing things (an MCP server that marks its read-only
  tools, `readOnlyHint`) is not offered to the name's choice. The 0.5B named the first tool of the
  memory server's table, `create_entities`, for "What is my sister's name?" and stored a made-up
  sister. Tools of a server that marks none, and the plugins, are left as they are.
- **A request to change something is answered by tools that change things** (`changes_only`), the other
  side of the same marks: a clause that opens with a verb of changing ("Now add bread to that grocery
  list", "Create a branch named x", "Stage greet.py and commit it") and none that opens with a verb of
  reading ("Read todo.md and add bread" reads first) is not offered the tools its server marks as only
  reading, while the table holds one that changes things. The 0.5B named `read_file` for the bread
  follow-up, and a table's first tool (`git_status`) for "Stage greet.py and commit it".
- **A chain's calls follow its steps** (`steps`): "Add 12 and 30 with the sum tool, then echo the result
  back" is offered, for its first call, the tools that match a word before "then", and once results
  came back, the tools that match a word after it, when one does. The 0.5B named the everything table's
  first tool, `echo`, and echoed a sum it made up; after the sum, it named the sum again.
- **`refused`** puts these together for each call the route's model writes.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Sequence

from loguru import logger

from sidespin.dates import MONTH_NAMES, MONTHS, WEEKDAY, dates_said, relative_date, unsaid_date
from sidespin.patterns import code_named
from sidespin.tables import DOMAINS, telling_words, words_of
from sidespin.tools import Tool, ToolCall
from sidespin.zones import names_in, takes_a_zone

__all__ = ["said_in", "mentioned", "grounded", "asked_parameters", "invented", "gives_a_value", "asked_for", "corrects",
           "largest_number", "refused", "asks_something", "reads_only", "asks_for_a_change", "changes_only", "steps",
           "names_a_folder", "names_a_path", "a_path_said", "given_a_folder_just_given", "asks_what_it_stores",
           "numbers_said", "zone_elsewhere"]


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBER_WORDS = {word: str(n) for n, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())} | {
    "a": "1", "an": "1", "single": "1", "once": "1", "twice": "2", "pair": "2", "couple": "2", "dozen": "12",
    "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "week": "7", "fortnight": "14", "decade": "10", "century": "100",
    # how often, as times a year: "compounded quarterly" says 4
    "daily": "365", "weekly": "52", "monthly": "12", "quarterly": "4", "annually": "1", "yearly": "1", "semi": "2",
    "biannually": "2", "semiannually": "2"} | {
    month: f"{n:02d} {n}" for n, month in enumerate("""january february march april may june july august september
    october november december""".split(), start=1)} | {  # "on March 2nd" says the 03 of 2023-03-02
    month: f"{n:02d} {n}" for n, month in enumerate(MONTHS, start=1) if month != "may"} | {
    "sept": "09 9"}  # "on apr the 5th"


def said_in(messages: Sequence[dict[str, Any]]) -> str:
    """Everything the conversation said, in lower case, number words also as digits: what a grounded argument
    may come from."""
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        for call in message.get("tool_calls") or []:
            parts.append(str((call.get("function") or {}).get("arguments") or ""))
    said = "\n".join(parts).lower()
    digits = [_NUMBER_WORDS[w] for w in _WORD.findall(said) if w in _NUMBER_WORDS] + _clock_times(said)
    derived = digits + _scaled(said) + _currency_codes(said) + _durations(said) + _short_years(said)
    return said + ("\n" + " ".join(derived) if derived else "")


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s?(minutes?|mins?|hours?|hrs?)\b")
_ONE_AHEAD = re.compile(r"\b(?:next|last|this|coming|past|previous) (?:day|week|month|year|quarter|hour|minute)\b")


def _durations(said: str) -> list[str]:
    """A duration said in minutes or hours, in seconds (and minutes) too: "3 minutes" says 180; "the next month"
    says 1 (one month ahead)."""
    numbers = []
    for amount, unit in _DURATION.findall(said):
        seconds = float(amount) * (60 if unit.startswith("m") else 3600)
        numbers += [f"{seconds:g}"] + ([f"{seconds / 60:g}"] if unit.startswith("h") else [])
    return numbers + ["1"] * bool(_ONE_AHEAD.search(said))


_SHORT_YEAR = re.compile(r"(?<![\w'])['‘’](\d{2})\b(?!')")  # "songs from '19", "the '90s"


def _short_years(said: str) -> list[str]:
    """A year said by its last two digits, as either century: "from '19" says 2019 (and 1919)."""
    return [f"{century}{digits}" for digits in _SHORT_YEAR.findall(said) for century in ("19", "20")]


# a number with what scales it: "5%" says 0.05, "213 million" 213000000, "$1.2M" 1200000, "50mH" 0.05, "100µF" 0.0001
_SCALED = re.compile(r"(\d+(?:\.\d+)?)(?:\s?(%|percent\b|per cent\b|thousand\b|million\b|billion\b|trillion\b)|"
                     r"(k|m|bn)\b|\s?(?!nd\b|pm\b)([kmµμunp])[a-zω]{1,2}\b)")  # not "2nd", "3 pm"
_SCALE = {"%": 1e-2, "percent": 1e-2, "per cent": 1e-2, "thousand": 1e3, "million": 1e6, "billion": 1e9,
          "trillion": 1e12, "k": 1e3, "m": 1e6, "bn": 1e9}
_PREFIX = {"k": 1e3, "m": 1e-3, "µ": 1e-6, "μ": 1e-6, "u": 1e-6, "n": 1e-9, "p": 1e-12}  # a unit's: km, mH, µF, nC


def _scaled(said: str) -> list[str]:
    """The numbers said with a scale, also as the number they stand for (a unit's prefix as its factor: a tool
    takes farads for "100µF"; an odd unit, "5 mph", adds a number nobody will write)."""
    numbers = []
    for number, word, short, prefix in _SCALED.findall(_THOUSANDS.sub("", said)):
        factor = _SCALE.get(word or short) or _PREFIX[prefix]
        numbers.append(f"{float(number) * factor:.12g}")
    return numbers


# a currency said by its name says its ISO code, the one a tool takes: "Convert 150 euros to Canadian dollars"
_CURRENCIES = ((r"\b(?:us|u\.s\.|american|united states) dollars?\b", "usd"), (r"\beuros?\b", "eur"),
               (r"\b(?:british )?pounds? sterling\b|\bbritish pounds?\b", "gbp"), (r"\byen\b", "jpy"),
               (r"\bcanadian dollars?\b", "cad"), (r"\baustralian dollars?\b", "aud"), (r"\bswiss francs?\b", "chf"),
               (r"\b(?:chinese )?yuan\b|\brenminbi\b", "cny"), (r"\bindian rupees?\b", "inr"),
               (r"\bmexican pesos?\b", "mxn"), (r"\bkorean won\b", "krw"), (r"\bnew zealand dollars?\b", "nzd"))


def _currency_codes(said: str) -> list[str]:
    return [code for pattern, code in _CURRENCIES if re.search(pattern, said)]


_TWELVE_HOUR = re.compile(r"\b(1[0-2]|0?[1-9])(?:[:.]([0-5]\d))?\s?(?:([ap])\.?m\b|(?:o'clock )?in the "
                          r"(morning|afternoon|evening|night)\b)")


def _clock_times(said: str) -> list[str]:
    """Times said on the twelve-hour clock, on the 24-hour one too: "3 PM" and "3 in the afternoon" say 15:00,
    "noon" 12:00."""
    times = [time for word, time in (("noon", "12:00"), ("midday", "12:00"), ("midnight", "00:00"))
             if re.search(rf"\b{word}\b", said)]
    for hour, minutes, half, part in _TWELVE_HOUR.findall(said):
        later = half == "p" or part in ("afternoon", "evening") or (part == "night" and int(hour) > 5)
        times.append(f"{int(hour) % 12 + (12 if later else 0):02d}:{minutes or '00'}")
    return times


# asking for something with a question: "Can you add bread?", "Peux-tu créer …?", "¿Puedes guardar …?"
_REQUEST = re.compile(r"\b(?:can|could|would|will) (?:you|u|i|we)\b|\bplease\b|\bwould like\b|\bhow about\b|\bmind\b|"
                      r"\bwhy (?:don't|not)\b|"
                      r"\b(?:peux|pouvez|pourrais|pourriez|veux|voulez)[- ](?:tu|vous)\b|\bpuede[sn]?\b|"
                      r"\bpodr[ií]a[sn]?\b|\b(?:kannst|könntest|können|könnten) (?:du|sie)\b|\bbitte\b|"
                      r"\b(?:puoi|potresti)\b", re.IGNORECASE)


def asks_something(text: str) -> bool:
    """Whether a message asks a question (it has one) and asks for nothing to be done (no "can you", "please" …,
    and no sentence that is not a question: "When is it? It should be in your memory." asks)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]
    questions = [s for s in sentences if s.endswith("?")]
    if not questions or _REQUEST.search(text):
        return False
    return all(_first_word(s) in _ASKING for s in questions) and all(
        s.endswith("?") or _first_word(s) in _STATING for s in sentences)


# a message that names a folder ("the notes folder"), or a path ("notes/todo.md", "budget.csv"): a path may go on
# past the folder a server works in (`sidespin.route`)
_FOLDER_WORD = re.compile(r"(?i)\b(?:folder|directory|dir|subfolder|subdirectory|dossier|répertoire|ordner|"
                          r"verzeichnis|carpeta|directorio|cartella)s?\b")
_PATH_SAID = re.compile(r"(?i)[\w.-]/[\w.-]|\b\w+\.[a-z][a-z0-9]{0,4}\b")


def names_a_folder(text: str) -> bool:
    return _FOLDER_WORD.search(text) is not None


def names_a_path(text: str) -> bool:
    return _PATH_SAID.search(text) is not None


def readers_of_a_file_named(tools: Sequence[Tool], text: str) -> list[Tool]:
    """The tools of `tools` that read files (marked read-only by their server, with a parameter named a path, a file
    or a folder), when `text` names a file by its path in a folder ("notes/ideas.md") and asks for no change; []
    otherwise. "Show me notes/ideas.md." and "What's in notes/todo.md?" had the 0.5B's chance of a call at 0.22 and
    0.18, and it answered that it could not."""
    if not _FILE_IN_A_FOLDER.search(text) or asks_for_a_change(text):
        return []
    return [t for t in tools if t.read_only and any(set(words_of(name)) & _PATH_NAMES for name in t.parameters)]


_FILE_IN_A_FOLDER = re.compile(r"(?i)[\w.-]/(?:[\w-]+/)*[\w-]+\.[a-z][a-z0-9]{0,4}\b")  # notes/ideas.md, /a/b.txt
_FILE_WORD = re.compile(r"(?i)\b(?:files?|fichiers?|dateie?n?|archivos?|documents?|documentos?)\b")
_PATH_NAMES = frozenset({"path", "paths", "file", "filename", "filepath", "folder", "directory", "dir"})


def not_of_its_place(tool: Tool, arguments: dict[str, Any], message: str) -> dict[str, Any]:
    """The arguments but for a path in a folder the tool's server works in (under it, or relative to it, given to a
    parameter named a path, a file or a folder), when the person's `message` names no file, folder nor path: what
    it adds to the folder is then a word of the message taken for a file's name. For "Write a Python function that
    reverses a string." the 0.5B read 'string' (the server's '…/files/string')."""
    if not tool.places or names_a_folder(message) or names_a_path(message) or _FILE_WORD.search(message):
        return arguments
    places = tuple(place.rstrip("/") + "/" for place in tool.places)
    return {name: value for name, value in arguments.items()
            if not (isinstance(value, str) and (value.startswith(places) or (
                set(words_of(name)) & _PATH_NAMES and not value.startswith(("/", "~")) and "://" not in value)))}


def of_folders(tools: Sequence[Tool], text: str) -> list[Tool]:
    """The tools a question about a folder may call: for a question (`asks_something`) that names a folder and no
    path nor file, those whose name or description speaks of folders, when some do ("Which files are in the notes
    folder?": the 0.5B named `read_file` and wrote notes.txt, which no one said); every tool otherwise."""
    if not asks_something(text) or not names_a_folder(text) or names_a_path(text):
        return list(tools)
    return [t for t in tools if names_a_folder(t.name.replace("_", " ") + " " + t.description)] or list(tools)


_SEGMENTS = re.compile(r"^[\w.-]+(?:[ /][\w.-]+)*$")  # names joined by slashes (or spaces): notes/todo.md


def _words_to_say(text: str) -> list[str]:
    """The words of a value that the conversation must say for it to come from there: three letters or more, not
    numbers (said in words as often: a date, "a dozen")."""
    return [word for word in _WORD.findall(text.lower()) if len(word) >= 3 and not word.isdigit()]


def a_path_said(path: str, said: str) -> bool:
    """Whether `path` (a part of one, written past a folder) is names joined by slashes, each word of which (three
    letters or more, not a number) `said` mentions: "notes/todo.md", not "}}. Please note that this command …", which
    the 0.5B wrote past a repository's folder for "git status for /home/me/repo please". Never a way up and out of
    the folder ("../../etc/passwd", which a tool result may say), nor two dots anywhere: the 1.5B, gone on past a
    repository's folder for "Stage greet.py and commit it", looped "..greet.py..greet.py..greet.py"."""
    words = _words_to_say(path)  # none, and the path itself is said: "000000000000000000000000" was not
    return bool(_SEGMENTS.match(path)) and ".." not in path and "." not in re.split(r"[ /]", path) and (
        all(mentioned(word, said) for word in words) if words else path.lower() in said)


def given_a_folder_just_given(call: ToolCall, calls: Sequence[ToolCall]) -> bool:
    """Whether `call` gives a path that an earlier call of the same answer, of another tool, was given: for "List
    the files in the notes folder with their sizes, then read the largest one" the 0.5B listed the notes folder and,
    in the same answer, read it as a file. What the folder holds is known once the listing answered."""
    given = {v for c in calls if c.name != call.name for v in c.arguments.values() if isinstance(v, str) and "/" in v}
    return any(isinstance(value, str) and value in given for value in call.arguments.values())


_OWN = re.compile(r"(?i)\b(?:my|our|mine|ours|mon|ma|mes|notre|nos|mi|mis|nuestr[oa]s?|mein|meine[nmrs]?|unser[e]?)\b")


def asks_what_it_stores(tool: Tool, text: str, listed: Sequence[Tool]) -> bool:
    """Whether the message `text` asks about the person's own things ("What is my sister's name?") and `tool` only
    reads a server that also stores (it marks its tools, and some of the `listed` change things): what a person told
    a memory in another conversation is in it, and nowhere else. In a new conversation the 0.5B named `read_graph`
    (p 0.09), refused as sharing no word, and said it did not fit (0.29). Such a call is neither unrelated nor asked
    the fit question (`sidespin.route`)."""
    if not tool.read_only or not tool.source.startswith("mcp:") or not _OWN.search(text) or not asks_something(text):
        return False
    return any(not t.read_only for t in listed if t.source == tool.source)


def _first_word(sentence: str) -> str:
    return (_WORD.findall(sentence.lower()) or [""])[0]


# how a question begins (a tag question, "Add 12 and 30, ok?", asks for something); in five languages
_ASKING = frozenset("""what which who whom whose when where why how is are was were do does did has have had am
qu que quel quelle quels quelles qui quand où comment pourquoi combien est
qué cuál cuáles quién quiénes cuándo dónde cómo por cuánto cuántos cuánta cuántas hay es son está están
was welche welcher welches wer wann wo wie warum ist sind gibt hat
cosa che quale quali chi quando dove come perché quanto quanti""".split())
# how a sentence that only says where or what begins ("It should be in your memory.", "It's in notes/todo.md.")
_STATING = frozenset("it its this that there the my i we he she they his her our their a an".split())


def reads_only(tools: Sequence[Tool], text: str, among: Sequence[Tool] = ()) -> list[Tool]:
    """The tools a message may call by its kind (`asks_something`): for a question, of the tools of servers that
    mark which of theirs only read (known from all the tools offered, `among`, which hold `tools`), those
    marked; every other tool."""
    if not asks_something(text):
        return list(tools)
    marking = {t.source for t in among or tools if t.read_only and t.source.startswith("mcp:")}
    return [t for t in tools if t.read_only or t.source not in marking]


def asks_for_a_change(text: str) -> bool:
    """Whether a message asks for something to be changed: a clause opens with a verb of changing ("add" only
    with a "to" after it: "Add 12 and 30" is a sum), and none with a verb of reading, and it asks no question."""
    if asks_something(text):
        return False
    opening = []
    for sentence in re.split(r"(?<=[.!?;:])\s+|\n+", text.strip().lower()):
        for clause in re.split(r",|\b(?:and|then|und|dann|et|puis|y|luego|e|poi)\b", sentence):
            words = [w for w in _WORD.findall(clause) if w not in _FILLER]
            if words:
                opening.append((words[0], clause))
    if any(word in _READING for word, _ in opening):
        return False
    return any(word in _CHANGING and (word not in _WITH_TO or re.search(r"\b(?:to|into)\b", clause))
               for word, clause in opening)


# what may stand before a clause's verb: "Now add …", "Please create …", "Can you stage …"
_FILLER = frozenset("""now then please also just so ok okay can could would will you u maybe kindly
maintenant stp svp peux pouvez tu vous bitte jetzt kannst du ahora por favor puedes ora per""".split())
# verbs of changing, as a clause opens with them (the imperative), in five languages
_CHANGING = frozenset("""add append create make write save store remember memorize memorise delete remove rename
move edit change update replace commit stage insert put set record modify overwrite erase reset checkout
ajoute ajouter crée créer créez écris écrire enregistre sauvegarde supprime efface renomme déplace modifie
change remplace mémorise retiens souviens note
füge erstelle lege schreibe schreib speichere lösche entferne benenne verschiebe ändere ersetze merke merk
añade agrega crea escribe guarda borra elimina renombra mueve cambia modifica reemplaza recuerda apunta anota
aggiungi scrivi salva cancella rinomina sposta sostituisci ricorda""".split())
_WITH_TO = frozenset({"add", "put", "write"})  # "Write a Python function …" changes nothing; "write it to x" does
# verbs of reading: a message that also reads ("Read todo.md and add bread") is offered every tool
_READING = frozenset("""read list show open find search get tell check look display view print echo fetch see
give count lis montre affiche ouvre cherche trouve dis lee muestra abre busca dime lies zeig zeige öffne suche
finde sag leggi mostra apri cerca trova dimmi""".split())


def changes_only(tools: Sequence[Tool], text: str, among: Sequence[Tool] = ()) -> list[Tool]:
    """The tools a request to change something (`asks_for_a_change`) may call: of the tools of servers that mark
    which of theirs only read (known from `among`, which holds `tools`), those not marked; every other tool. All
    of `tools` when none of them changes things, or the message asks for no change."""
    if not asks_for_a_change(text):
        return list(tools)
    marking = {t.source for t in among or tools if t.read_only and t.source.startswith("mcp:")}
    changing = [t for t in tools if t.source in marking and not t.read_only]
    return [t for t in tools if not t.read_only or t.source not in marking] if changing else list(tools)


def steps(text: str) -> list[str]:
    """The steps of a message that asks for them in order ("Add 12 and 30 with the sum tool, then echo the result
    back"), split at each "then" ("puis", "dann", "luego" …); [] when it asks for none."""
    parts = [part.strip(" ,;") for part in _THEN.split(text)]
    return [part for part in parts if part] if len(parts) > 1 else []


_THEN = re.compile(r"\b(?:and )?(?:then|afterwards|after that|puis|ensuite|dann|danach|anschließend|luego|después|"
                   r"poi|quindi)\b", re.IGNORECASE)


def grounded(tool: Tool, arguments: dict[str, Any], said: str) -> dict[str, Any]:
    """The arguments without the optional ones whose value the conversation never mentions; of an optional list, the
    items it mentions, when it mentions some (the 0.5B wrote every cuisine a tool allows for "a seafood restaurant")."""
    kept = {}
    elsewhere = _named_elsewhere(tool, arguments, said)
    for name, value in arguments.items():
        if name not in tool.required and isinstance(value, list) and len(value) > 1:
            value = [item for item in value if _mentioned(name, item, said)] or value
        if name in tool.required or (_mentioned_or_coded(tool, name, value, said)
                                     and not _restates(tool, name, value, said) and name not in elsewhere
                                     and not unsaid_date(value, said) and not _short_unsaid(tool, name, value, said)):
            kept[name] = value
        else:
            why = "said for another parameter" if name in elsewhere else "a value the conversation never mentions"
            logger.info("ROUTE_ARGUMENT_DROPPED {}.{} (optional: {})", tool.name, name, why)
            logger.debug("ROUTE_ARGUMENT_DROPPED_VALUE {}.{}={}", tool.name, name,
                         json.dumps(value, ensure_ascii=False)[:60])
    return kept


def _mentioned_or_coded(tool: Tool, name: str, value: Any, said: str) -> bool:
    """`_mentioned`, or the number the parameter's description gives the thing the conversation names (`province_id`
    3, of "… 3 for Chonburi", for "… in Chonburi Province")."""
    if isinstance(value, int) and not isinstance(value, bool):
        schema = tool.parameters.get(name)
        if isinstance(schema, dict) and value == code_named(schema, said):
            return True
    return _mentioned(name, value, said)


def _named_elsewhere(tool: Tool, arguments: dict[str, Any], said: str) -> set[str]:
    """The optional parameters given a text that the call gives another parameter too, when the conversation names
    that other parameter and not them: for "songs from the album 'Welcome To The Fishbowl'" the 0.5B wrote the title
    as `album` and as `artist`. Where the message names neither whole, one whose name it touches (`_touched`) is
    named: for "… departing from Paris … at 3 in the afternoon" it wrote the departure's time as the return's too.
    A list of one text is that text: a sensor's serial written as its `sensorSerial` and as the `networkId` list.
    An allowed choice counts too, but for a switch's 'True' ('False', 'dontcare'): for "a three-star hotel" the 0.5B
    wrote "3" as `star_rating` and as `number_of_rooms`, both lists of texts.
    No value of BFCL's right answers (eight single-turn categories) is dropped by it: where one text fills two
    parameters, the message names both, or neither, or the one left is required."""
    words = set(words_of(said))
    by_value: dict[str, list[str]] = {}
    for name, value in arguments.items():
        if isinstance(value, list) and len(value) == 1:  # the sensor's serial as `sensorSerial` and `networkId` [it]
            value = value[0]
        if isinstance(value, str) and value.strip() and not _switch(value):
            by_value.setdefault(value.strip().lower(), []).append(name)
    dropped: set[str] = set()
    for names in by_value.values():
        named = [name for name in names if _named(name, words)] or [name for name in names if _touched(name, words)]
        if len(names) > 1 and named:
            dropped.update(name for name in names if name not in named and name not in tool.required)
    return dropped


def _named(parameter: str, said: set[str]) -> bool:
    """Whether every word of a parameter's name of three letters or more begins a word `said` ("full name" for
    `fullName`, "sorted" for `sort`), with three letters more at most."""
    named = [w for w in words_of(parameter) if len(w) >= 3]
    return bool(named) and all(any(s.startswith(w) and len(s) - len(w) <= 3 for s in said) for w in named)


def _touched(parameter: str, said: set[str]) -> bool:
    """Whether a word of a parameter's name of four letters or more begins, by its first five letters, a word `said`:
    "departing" for `departure_time`, "three-star" for `star_rating`."""
    return any(any(s.startswith(w[:5]) for s in said) for w in words_of(parameter) if len(w) >= 4)


# a unit a measure is asked in: "the distance in miles", "in celsius" (not "in km/h", nor a radius "of 4 inches")
_UNIT_WORDS = (r"(?:inch(?:es)?|miles?|mi|km|kilomet(?:er|re)s?|met(?:er|re)s?|m|cm|mm|centimet(?:er|re)s?|feet|foot|"
               r"ft|yards?|celsius|fahrenheit|kelvin|pounds?|lbs?|kg|kilograms?|grams?|g|lit(?:er|re)s?|gallons?|"
               r"ounces?|oz)")
_MEASURED = re.compile(rf"\bin {_UNIT_WORDS}(?![\w/²³^])")


def unit_asked(said: str) -> str | None:
    """The one unit the conversation (`said`, from `said_in`) wants a measure in ("the distance in miles"), or
    None."""
    units = {found.group(0)[3:] for found in _MEASURED.finditer(said)}
    return next(iter(units)) if len(units) == 1 else None


def asked_parameters(tool: Tool, arguments: dict[str, Any], asked: str) -> list[str]:
    """The optional parameters a call left out that the message (`asked`) asks for: every word of the parameter's
    name of three letters or more begins a word of the message ("full name" for `fullName`, "sorted" for `sort`),
    or one of the values its schema allows is said whole ("seafood" for a `cuisine` of Seafood, Italian …).

    Of BFCL's right answers (simple_python, multiple, live_simple, live_multiple), 535 of the 1,304 optional
    values a question needs are asked for this way; of the 2,017 a question leaves free, 114 are, and most of
    those take the value said ("fahrenheit", "NASDAQ"); 9 must be left out.

    So is a parameter named a date when the message says a whole date no value of the call has, in any form
    (`dates_said`): for "2 tickets for 'After The Wedding' showing on 2023-04-22 at 19:00" the 0.5B left out
    `show_date`, and `date` for "… in Seattle, WA on the 15th of May 2023?". Of BFCL's right answers (eight
    single-turn categories), the 123 optional date parameters beside a date said and not used all need a value.

    So is a parameter named a unit when the message asks for a measure in a unit ("the distance in miles"): of
    BFCL's right answers, 19 more are asked so, 8 of them needing the unit said, the others free to take it.
    """
    said = set(words_of(asked))
    lower = asked.lower()
    written = " ".join(v for v in arguments.values() if isinstance(v, str))
    dates_left = dates_said(lower) - dates_said(written.lower())
    measured = _MEASURED.search(lower) is not None
    wanted = []
    for name, schema in tool.parameters.items():
        if name in tool.required or name in arguments or not isinstance(schema, dict):
            continue
        if _named(name, said) or any(_says_whole(value.lower(), lower)
                                     for value in _allowed(schema) if telling_words(value)) or (
                dates_left and "date" in words_of(name)) or (
                measured and set(words_of(name)) & {"unit", "units"}):
            wanted.append(name)
    return wanted


def _short_unsaid(tool: Tool, name: str, value: Any, said: str) -> bool:
    """Whether a text of short words only (two letters at most: "US", "en") has one that no word of the conversation
    begins with: the 0.5B gave `region` "US" for "the most followed person on twitter who tweets about psychology". A
    short word begun is said ("CA" for California, "cm" in "5cm", "S" for small), and so is a choice the parameter
    allows ('es-ES' for "in Spanish"). It drops no value of BFCL's right answers (3,152 calls), nor does `_mentioned`
    reading only telling words."""
    if not isinstance(value, str) or value in _allowed(tool.parameters.get(name) or {}):
        return False
    letters = [w for w in _WORD.findall(value.lower()) if not w.isdigit()]
    return bool(letters) and all(len(w) <= 2 for w in letters) and not all(
        re.search(rf"(?<![^\W\d_]){re.escape(w)}", said) for w in letters)


def _allowed(schema: dict[str, Any]) -> list[str]:
    """The strings a schema allows, when it lists them (itself, or its items)."""
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    return [v for v in schema.get("enum") or items.get("enum") or [] if isinstance(v, str) and len(v) >= 3]


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e-?\d+)?")
# a value to fill in, not a value: your-repo-path, YOUR_API_KEY, /path/to/your/files, <token>, main_branch_name
_PLACEHOLDER = re.compile(r"(?i)(?<![a-z])your[-_/]|/your(?![a-z])|/path/to/|^\s*<[^<>]+>\s*$|"
                          r"^\s*your( [a-z]+){1,2}\s*$|^\s*(?:[a-z0-9]+_)+(?:name|id|path|key|value|here|token)\s*$")
_EMAIL = re.compile(r"^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$")  # an address: one made up to fill a call reaches a stranger
# a web address and its host: a made-up one reaches a stranger's server. Of BFCL's right answers, each of the 26
# addresses has its host said, or in its tool's description (9: optional, the tool's default)
_URL = re.compile(r"^\s*[a-z][a-z0-9+.-]*://(?:[^/\s?#@]*@)?([^/\s?#@:]+)", re.IGNORECASE)  # no user, no port
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
# a file's name ending in .ext: a path (spaces allowed: "/home/me/India/New Delhi.txt") or one word, not an address
# nor a command ("taskkill /IM firefox.exe")
_FILE_NAME = re.compile(r"^(?:[/~.][^@]*|[^\s@]*)[^\s/@.]\.([A-Za-z][A-Za-z0-9]{0,4})$")


_BRACKETED = re.compile(r"[\[(][\d.,\s-]+[\])]")  # a list of numbers: [200,300,400,500]


def numbers_said(said: str) -> set[float]:
    """The numbers said, a comma between digits read as a thousands separator ("5,000" says 5000, not 5), but in
    brackets as between items too ("cash_flows=[200,300,400,500]" says 200, 300, 400 and 500)."""
    listed = " ".join(_BRACKETED.findall(said))
    return {float(n) for text in (_THOUSANDS.sub("", said), listed) for n in _NUMBER.findall(text)}


def largest_number(said: str) -> float:
    """The largest number written in `said` (0 when none)."""
    return max(numbers_said(said), default=0.0)


def mentioned(value: Any, said: str) -> bool:
    """Whether the conversation (`said`, from `said_in`) mentions a value (the rules of `_mentioned`)."""
    return _mentioned("", value, said)


# the words a switch's name may be said by: `good_for_kids` is asked for by "suitable for children"
_SAME_WORD = {"kids": ("child", "children", "grandchildren", "family"), "children": ("kid", "kids")}


def _mentioned(name: str, value: Any, said: str) -> bool:
    if isinstance(value, bool) or _switch(value):  # a switch is asked for by naming what it switches
        return any(word[:5] in said or word.endswith("s") and _says_whole(word[:-1], said)  # "kid friendly"
                   or any(_says_whole(other, said) for other in _SAME_WORD.get(word, ()))  # "for children"
                   for word in words_of(name) if len(word) >= 4)  # "full name" for `fullName`
    if isinstance(value, (int, float)):  # a number said as such: 1 is not in "10", 5000 is in "5,000"
        return any(math.isclose(abs(value), number, rel_tol=1e-9) for number in numbers_said(said))
    if isinstance(value, str):
        if _PLACEHOLDER.search(value) or _EMAIL.match(value.strip()):  # said whole: "YOUR_API_KEY" shares "api"
            return value.strip().lower() in said  # with the message, and "adriel@example.com" "Adriel", but neither is
        address = _URL.match(value)
        if address:  # its host said: "https://api.example.com/bank-routing-number" shares "bank" with the message
            return address.group(1).lower() in said
        file = _FILE_NAME.match(value.strip())
        if file and not _says_whole(file.group(1).lower(), said):
            return False  # "notes.txt" for "the notes folder": an extension no one said
        if value.strip() and not _WORD.search(value):  # "..." for `nextToken`: said as it is, or nothing
            return value.strip() in said
        words = _words_looked_for(value)
        telling = telling_words(value)  # not the "the" of 'The Great Gatsby'; a number tells ("x**2" for "x^2")
        words = [w for w in words if w in telling or w.isdigit()] or words
        return not words or any(w in said or (len(w) >= 6 and w[:-1] in said) or (  # "German": Germany
            w.endswith("s") and _says_whole(w[:-1], said)) for w in words) or (  # 'miles' for "in mile"
            _misspelt([w for w in words if len(w) >= 6], said)) or _initials_said(value, said)
    if isinstance(value, list):
        return all(_mentioned(name, item, said) for item in value) if value else False
    if isinstance(value, dict):
        return any(_mentioned(key, item, said) for key, item in value.items())
    return value is None


_CAPITALISED = re.compile(r"[A-Z][a-z]+")


def _initials_said(value: str, said: str) -> bool:
    """Whether `said` has, as a word, the initials of a place's name of two capitalised words or more (before a comma),
    or them and one letter more: "la" or "lax" for 'Los Angeles, CA', "sf" for 'San Francisco, CA', "nyc" for 'New
    York, NY'. Of BFCL's right answers, 12 required values refused as made up before are said so, and 2 more by the
    letter more."""
    named = _CAPITALISED.findall(value.split(",", 1)[0])
    if len(named) < 2:
        return False
    initials = "".join(word[0] for word in named).lower()  # and one letter more: "nyc", "lax", "sfo"
    return re.search(rf"(?<![^\W_]){re.escape(initials)}[a-z]?(?![^\W_])", said) is not None


def _says_whole(text: str, said: str) -> bool:
    """Whether `said` has `text` with no letter or digit on either side: "seafood" in "a seafood restaurant", the
    extension "txt", the initials "la"; not "la" inside "atlanta"."""
    return re.search(rf"(?<![^\W_]){re.escape(text)}(?![^\W_])", said) is not None


def _misspelt(words: list[str], said: str) -> bool:
    """Whether `said` has one of `words` with one letter added, left out, changed or two swapped: the 0.5B wrote
    "Chicago" for "a weather update for Chcicago". `said` is read once for all of them."""
    if not words:
        return False
    others = set(_WORD.findall(said))
    return any(_one_edit(word, other) for word in words for other in others if abs(len(other) - len(word)) <= 1)


def _one_edit(a: str, b: str) -> bool:
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):
        return a[i:] == b[i + 1:]
    return i < len(a) and (a[i + 1:] == b[i + 1:] or a[i + 1:i + 2] + a[i] + a[i + 2:] == b[i:])


_SWITCH = frozenset({"true", "false", "yes", "no"})


def _switch(value: Any) -> bool:
    """Whether a value is a switch written as a string: a tool offering 'True', 'False' and 'dontcare' as a string's
    values ("free entry" asks for `free_entry` 'True', though no one says "true")."""
    return isinstance(value, str) and value.strip().lower() in _SWITCH


def invented(tool: Tool, arguments: dict[str, Any], said: str) -> list[str]:
    """The required arguments whose values neither the conversation (`said`, from `said_in`) nor the tool's own
    description, schema and place (the folders its server works in) mention: a value made up to fill a call the
    message did not ask for ("the capital of Brazil?" answered with `calculate_area(base=10, height=5)`), or that
    restate their parameter's own description (`_restates`), or that write a host name as a place: the 0.5B asked
    `get_current_weather` for "example.net, CA" when asked for the files that talk to 'example.net'."""
    schema = json.dumps(tool.input_schema, ensure_ascii=False)
    known = "\n".join([said, tool.description, *tool.places, schema]).lower()
    return [name for name in tool.required if name in arguments
            and (not (_known(name, arguments[name], said, tool, known) or _nothing(arguments[name])
                      or relative_date(arguments[name], said))
                 or _restates(tool, name, arguments[name], known) or unsaid_date(arguments[name], said)
                 or _an_example(tool, name, arguments[name], said) or _HOST_AS_PLACE.match(str(arguments[name])))]


# a host name written as a place, a state or a country after it: "example.net, CA", "google.com, CA"
_HOST_AS_PLACE = re.compile(rf"(?i)^\s*(?:https?://)?[\w-]+(?:\.[\w-]+)*\.(?:{'|'.join(sorted(DOMAINS))})"
                            r"(?:/\S*)?\s*,\s*[a-z][a-z .]*$")


def _known(name: str, value: Any, said: str, tool: Tool, known: str) -> bool:
    """Whether the conversation (`said`) or the folders the tool works in mention a value, or the tool's own text
    (`known`: its description and schema too) does: a text by one of its words, or by all of them where only the
    tool's text has them (and a placeholder, "/path/to/backup", by being said whole). The 0.5B called
    `get_museum_artists` for "Who are the famous dancers of the 19th Century?" with `museum_name` "The Metropolitan
    Museum of Art", "museum" and "art" the tool's own words."""
    if not isinstance(value, str):
        return _mentioned(name, value, known)
    if _mentioned(name, value, "\n".join([said, *tool.places]).lower()):
        return True  # `known` holds all of that text
    return _mentioned(name, value, known) and all(_mentioned(name, word, known) for word in _words_looked_for(value))


def _words_looked_for(value: str) -> list[str]:
    """The words of a text looked for in what was said: three letters or more, or a number."""
    return [w for w in _WORD.findall(value.lower()) if len(w) >= 3 or w.isdigit()]


# where a description gives examples: "such as 'San Francisco, CA' or 'New York, NY'", "(e.g., '2023-04-15')"
_EXAMPLES = re.compile(r"(?i)(?:\b(?:such as|for example|for instance|example|like)\b|\be\.g\.|\beg\.)\W{0,4}"
                       r"((?:['\"][^'\"\n]{1,80}['\"](?:\s*(?:,|or|and|,\s*or)\s*)?)+)")
_QUOTED = re.compile(r"['\"]([^'\"\n]{1,80})['\"]")


def _an_example(tool: Tool, name: str, value: Any, said: str) -> bool:
    """Whether a string value is one of the examples the tool's text gives ("such as 'San Francisco, CA'"), its own
    parameter's or another's, which the conversation (`said`) does not mention, for a parameter that lists no
    allowed values. The 0.5B sends a request it cannot fulfil to an unrelated tool filled with its examples: "Can
    you send to Mom an Email saying we should go out and play if Friday is okay." as the weather in San Francisco,
    CA; a hotel "on the 15th of July" as flights from 'LAX', the destination's example, to 'JFK', the origin's. Of
    BFCL's right answers (eight single-turn categories), 9 required values are examples the question says otherwise
    ("NYC" for 'New York, NY', "SF" for 'San Francisco, CA', "LA" for 'Los Angeles, CA'). An example follows "such
    as", "for example", "like" or "e.g." ("e.g., 'Jane Doe'": until 2026-11-27 an "e.g." before a comma was not
    read, and "ratings" was answered with the reviews of Jane Doe)."""
    schema = tool.parameters.get(name)
    if not isinstance(value, str) or not isinstance(schema, dict) or _allowed(schema) or _mentioned(name, value, said):
        return False
    texts = [tool.description, *(str(sub.get("description") or "") for sub in tool.parameters.values()
                                 if isinstance(sub, dict))]
    examples = {quoted.strip().lower() for text in texts for listed in _EXAMPLES.findall(text)
                for quoted in _QUOTED.findall(listed)}
    return value.strip().lower() in examples


def _nothing(value: Any) -> bool:
    """Whether a required value is zero, which no one needs to say: "starts from rest" (`initial_velocity` 0), "from
    the first record" (`offset` 0). Of BFCL's right answers, 8 need a zero no one said; none of the 92 calls refused
    as made up in the day's model runs had one."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0


_SCHEMA_KEYS = frozenset({"description", "properties", "items", "default", "enum", "required"})


def _restates(tool: Tool, name: str, value: Any, said: str) -> bool:
    """Whether a string value is its parameter's own description, or most of it, or nearly it in other order (four
    words or more, seven in ten of the words of both shared): no value at all. The 0.5B, offered `get_song_lyrics`
    for a question it does not answer, wrote `song_title` "The title of the song.", and for "Find a selection of
    tracks for me" it played `track` "The song title of the track to be played." (described "The title of the track
    to be played."). Nor is a value of five words or more that opens the tool's own description: for "Please make
    an image …" (nothing to draw said) it drew `desc` "Generates an image based on the provided description and saves
    it …". Not one of the 6,772 string values of BFCL's right answers (eight single-turn categories) does any of
    these. Nor is a text that says only its parameter's name (`_names_itself`), nor an object that is a schema
    ("type" with a "description", "properties" …) where the parameter's own schema names no such keys: for "fetch
    …/device-connector-versions.json" the 0.5B wrote `params` as its own schema, {"type": "object", "description":
    "Optional query parameters …"}. No right answer of BFCL has one."""
    if isinstance(value, dict):
        schema = tool.parameters.get(name)
        declared = schema.get("properties") if isinstance(schema, dict) else None
        return "type" in value and bool(set(value) & _SCHEMA_KEYS) and not (
            isinstance(declared, dict) and "type" in declared)
    if not isinstance(value, str):
        return False
    written = _plain(value)
    opening = _plain(tool.description)
    if len(written.split()) >= 5 and opening.startswith(written[:max(30, len(written) // 2)]):
        return True
    schema = tool.parameters.get(name)
    if _names_itself(name, value, schema, said):
        return True
    described = schema.get("description") if isinstance(schema, dict) else None
    if not isinstance(described, str):
        return False
    meant = _plain(described)
    words, meant_words = set(written.split()), set(meant.split())
    return bool(written) and (written == meant or (len(written) > 8 and written in meant
                                                   and len(written) > 0.6 * len(meant))
                              or (len(words) >= 4 and len(words & meant_words) >= 0.7 * len(words | meant_words)))


_FILLING = frozenset("the a an name your my title of here some any specific example value new".split())


def _names_itself(name: str, value: str, schema: Any, said: str) -> bool:
    """Whether a text says only its parameter's name, with words that fill a blank ("The Artist Name" for `artist`,
    "The Album Name" for `album`: the 0.5B's, for "Find me some electropop songs from 2014"), and is not one of the
    values its schema allows nor said whole. A number no one said fills a blank too: the 0.5B wrote four calls of
    `mission` "Mission 1" … "Mission 4" for "with different missions". Of BFCL's 6,772 right string values, 5 do
    this, 3 of them an API key placeholder ("YOUR_API_KEY_HERE") refused already; the numbers add none."""
    words, named = set(words_of(value)), set(words_of(name))
    numbered = {word for word in words if word.isdigit() and not _says_whole(word, said)}  # "Mission 1", "Trophy 1"
    return bool(words & named) and words <= named | _FILLING | numbered and bool(words - _FILLING - numbered) and (
        value not in _allowed(schema if isinstance(schema, dict) else {})) and value.strip().lower() not in said


def _plain(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def gives_a_value(tool: Tool, arguments: dict[str, Any], said: str) -> bool:
    """Whether the conversation (`said`, from `said_in`) mentions one of the call's required values, or of a tool
    that requires none, one of its values: a guess at another tool is backed by the message, not only by what the
    tool knows itself (the folder its server works in). "Can you retrieve a list of songs performed by Little Mix
    from the 'Get Weird' album?": refused an alarms tool, the 0.5B's next name was a music search whose every value
    is optional, artist and album said."""
    if tool.required:
        return any(_mentioned(name, arguments[name], said) for name in tool.required if name in arguments)
    return any(_mentioned(name, value, said) and not isinstance(value, bool) and not _switch(value)
               for name, value in arguments.items())  # a switch is said by its name alone


def asked_for(call: ToolCall, earlier: Sequence[ToolCall], tool: Tool, asked: str,
              words: dict[str, set[str]]) -> bool:
    """Whether a call after the first of an answer is one more thing the message asks for.

    A small model writes one call where a message asks for several ("the time in Tokyo and in Paris"), so
    after it stops one more call is tried; and it also writes calls no one asked for after the right one
    (the cone's mass after its volume). A call of the same tool is kept when each of its values that no
    earlier call of the tool had is mentioned in the message (`asked`, from `said_in`) and is not part of,
    nor contains, the earlier value (a folder of the file just read is not a second request), and at least
    one is new; a switch turned the other way is not new, nor the value the tool takes when none is given (its
    `default`: "all the PostgreSQL servers" had the 0.5B list the servers of type "postgres", then of type "all",
    the default). A call of another tool is kept when the message
    has a word of its own for that tool, one the tool matches and no earlier call's tool does (`words`,
    from `sidespin.tables.words_matched`), and mentions each of its required values (a folder its server works in
    needs no mention, `_its_place`): "Tesla's birthdate
    and his famous discovery" asks two tools the same name, while a look-alike given the same values, or
    the cone's mass after its volume, has no word of its own.
    """
    same = [c.arguments for c in earlier if c.name == call.name]
    if not same:
        required = [name for name in tool.required if name in call.arguments]
        return word_of_its_own(call.name, earlier, words) and all(
            _its_place(tool, call.arguments[name]) or _mentioned(name, call.arguments[name], asked)
            and (_allowed(tool.parameters.get(name) or {}) or _all_said(call.arguments[name], asked))
            for name in required)
    new = 0
    for name, value in call.arguments.items():
        before = [arguments.get(name) for arguments in same]
        schema = tool.parameters.get(name) or {}
        if value in before or isinstance(value, bool) or ("default" in schema and value == schema["default"]):
            continue
        if not _mentioned(name, value, asked) or any(_overlaps(value, b) for b in before) or not _says_new(
                value, before, asked):
            return False
        new += 1
    return new > 0  # the same call with fewer arguments, or a switch turned, asks for nothing new


def _its_place(tool: Tool, value: Any) -> bool:
    """Whether `value` is a folder the tool's server works in, which a message need not say: "Stage greet.py and
    commit it with the message …" had the 1.5B write `git_add`, then `git_commit` of the server's repository."""
    return isinstance(value, str) and value.rstrip("/") in {place.rstrip("/") for place in tool.places}


_PROSE = re.compile(r"^[^\W_][\w\s,.'&-]*$")  # words, not code: "lambda x: x**2" is written, not said


def _all_said(value: Any, asked: str) -> bool:
    """Whether each word (three letters or more, not a number) of a text of words is mentioned in `asked`: a call of
    another tool after the first needs its values from the message. For "a healthy lunch recipe … that uses chicken
    and mushrooms" the 0.5B went on to replace "chicken" with "steamed chicken". Of BFCL's right answers, 2 of the
    316 calls of another tool after the first (parallel_multiple, live_parallel_multiple) have a value with a word no
    one said, both code ("lambda x: x**2"), which this leaves alone."""
    if not isinstance(value, str) or not _PROSE.match(value.strip()):
        return True
    return all(mentioned(word, asked) for word in _words_to_say(value))


def _says_new(value: Any, before: list[Any], asked: str) -> bool:
    """Whether a value of a call written again, beside the same tool's earlier calls' values of that parameter
    (`before`), has a word they do not that `asked` mentions, when it has such words (numbers aside: a date is said
    in words). For "the current weather conditions in New Delhi, India" the 0.5B went on to "New York, NY":
    "new" is said, "york" is not. Of the 485 calls of a tool called before in BFCL's right answers (parallel,
    parallel_multiple and their live kinds), none is refused by it."""
    if not isinstance(value, str):
        return True
    old = {word for b in before if isinstance(b, str) for word in _WORD.findall(b.lower())}
    new = [word for word in _words_to_say(value) if word not in old]
    return not new or any(mentioned(word, asked) for word in new)


def corrects(call: ToolCall, earlier: ToolCall, asked: str) -> bool:
    """Whether `call` is the `earlier` call written again with what the message (`asked`, from `said_in`) says
    where the earlier one had made something up: the same tool, and each value that differs is one the message
    does not mention in the earlier call and does in this one. For "a comfortable Uber ride …" the 0.5B wrote
    `uber.ride` with the type "plus", then again with "comfort"."""
    if call.name != earlier.name:
        return False
    differ = [name for name in {*call.arguments, *earlier.arguments}
              if call.arguments.get(name) != earlier.arguments.get(name)]
    return bool(differ) and all(
        name in call.arguments and name in earlier.arguments and _mentioned(name, call.arguments[name], asked)
        and not _mentioned(name, earlier.arguments[name], asked) for name in differ)


# words of asking, not of what is asked: "Can you help me find a house …" is no request for `FindAttractions`
_OF_ASKING = frozenset("find search look help check being no one".split())
# function words the tables' stop list leaves in: "If I have 100$ and I donated 40. How much do I have now?" is no
# request for a web search whose description says "if"
_NOT_A_WORD_FOR = frozenset("if has had having been".split())


def word_of_its_own(name: str, earlier: Sequence[ToolCall], words: dict[str, set[str]]) -> bool:
    """Whether a call of the tool `name` after the `earlier` ones may be one more thing the message asks: the
    first call, one of a tool called before, or one whose tool matches a word of the message (`words`) that
    none of the earlier calls' tools does, and that is not a word of asking (`_OF_ASKING`): after the house
    searched for "Can you help me find a house for one in London?", the 0.5B went on to the city's
    attractions ("help", "find"), and after the bus searched for, bought its tickets ("being"). Of BFCL's
    right answers, no call of another tool after the first (316) loses its word of its own this way. Known
    from the name alone: a call refused by it is refused before its arguments are written (seconds, for a
    small model on a CPU)."""
    if not earlier or any(c.name == name for c in earlier):
        return True
    return bool(words.get(name, set()).difference(_OF_ASKING, *(words.get(c.name, set()) for c in earlier)))


def with_a_word(tools: Sequence[Tool], words: dict[str, set[str]]) -> list[Tool]:
    """The tools that match a word of the message (`words`) that is not a word of asking (`_OF_ASKING`): what a
    first call is chosen among when some tools do and others do not. For "I'm looking to rent a home in Fremont
    with at least 3 bedrooms …" the 0.5B named `Alarm_1_GetAlarms`, the table's first tool, which shares no word
    with it, beside `Homes_2_FindHomeByArea`. In the recorded BFCL runs (questions of several functions) the
    0.5B's first name had no word while another tool had one 27 times, and 21 of those answers were wrong. Of
    BFCL's right answers, the first call's tool has no word while another has one in 7 of the 1,053 live_multiple
    questions, 1 of 200 parallel_multiple, 1 of 24 live_parallel_multiple and none of 200 multiple ("When was
    Nikola Tesla born …" asks `birthdate`, which shares no word with "born")."""
    return [tool for tool in tools if words.get(tool.name, set()) - _OF_ASKING - _NOT_A_WORD_FOR]


def refused(call: ToolCall, calls: list[ToolCall], tool: Tool, said: str, asked: str,
            words: dict[str, set[str]], earlier: Sequence[ToolCall] = ()) -> bool:
    """Whether a written call is not made: the same as an earlier one of the answer, one of required values
    nothing `said` mentions, or one after the first that the message (`asked`) does not ask for. After
    results came back (`earlier`, the calls made since the message), the first call of the answer is one
    after those: it needs a word of its own in the message too (its values may come from the results):
    given a repository's status, a small model goes on to its diffs, staged and unstaged, for "What's
    today's date?"."""
    if any(c.name == call.name and c.arguments == call.arguments for c in calls):
        return True
    made_up = invented(tool, call.arguments, said)
    if made_up:
        values = ", ".join(f"{name}={json.dumps(call.arguments[name], ensure_ascii=False)[:60]}" for name in made_up)
        logger.info("ROUTE_INVENTED {} {}: required values nothing said, so no call", call.name, values)
        return True
    if calls and not asked_for(call, calls, tool, asked, words):
        logger.info("ROUTE_ANOTHER_REFUSED {} (not asked for in the message) {}", call.name,
                    json.dumps(call.arguments, ensure_ascii=False)[:120])
        return True
    if not calls and earlier and not asked_for(call, earlier, tool, said, words):
        logger.info("ROUTE_AGAIN_REFUSED {} (the message has no word of its own for it)", call.name)
        return True
    return False


def zone_elsewhere(tool: Tool, arguments: dict[str, Any], said: str, message: str) -> str | None:
    """The name the person's `message` gives when a call's time zone is one the conversation (`said`) never
    mentions, and that name is no word of the zone: for "What's the time in Porto?" the 0.5B wrote 'Europe/Berlin',
    which the reference time server's text gives as the local zone, and Berlin's time was told as Porto's. None
    when the message names nothing ("What time is it?": the local zone is the answer)."""
    for name, value in arguments.items():
        schema = tool.parameters.get(name)
        if not isinstance(value, str) or not isinstance(schema, dict) or not takes_a_zone(schema) or _mentioned(
                name, value, said):
            continue
        zone_words = set(words_of(value))
        other = next((words for words in names_in(message) if not {w.lower() for w in words} & zone_words
                      and not all(_NO_PLACE.match(w) for w in words)), None)
        if other:
            return " ".join(other)
    return None


# a name that says no place: a month, a day, or letters in capitals ("4pm EST" for 'America/New_York', "PM", "UK")
_NO_PLACE = re.compile(rf"(?i:(?:{'|'.join(MONTH_NAMES)}|{WEEKDAY})\.?)$|[A-Z]+\.?$")


def _overlaps(value: Any, other: Any) -> bool:
    if not isinstance(value, str) or not isinstance(other, str):
        return False
    a, b = value.lower().strip(), other.lower().strip()
    return bool(a) and bool(b) and (a in b or b in a)
