"""The `folders` shape: servers that work in folders the configuration names (`Tool.places`).

Taking a file or a folder: `_takes_file`, `_takes_place`; only reading: `values.reads`. Rules (docs/tool-use-rules.md):

- `folders.file_named`: a message naming a file reads the table with a tool that takes one (and a text, where the
  message asks to make or add a thing), where its server's folder is the nearest holding the file (a new file: files
  of its extension) or none holds one; the call, down to `NAMED_FLOOR`, is a reader's (a changer's where the message
  asks to make or change something).
- `folders.folder_named`: a message naming a folder the server holds (called a folder, or written "name/") reads
  that table; the call, down to `NAMED_FLOOR`, is a tool's that takes a folder.
- `folders.files_asked`: a message asking about the person's files (the word, plural, in four languages), naming
  none, reads the table of a tool that takes a folder and only reads (one named for files or folders, where one is,
  not for a kind of them: `list_directory`, not `list_workbooks`); the call is such a tool's.
- `folders.kind_of_file`: of those, a message asking files of a kind ("markdown files", "fichiers PDF", "*.txt
  files") goes to the tools that take a pattern (a parameter saying glob, pattern or wildcard), where one is.
- `folders.file_before`: a change asked after the last call took a file, naming none, goes to that table's tools
  that take a file and change things, down to `NAMED_FLOOR`, and to that file.
- `folders.inside`: a relative path, one under the folders' parent, or one in a folder lacking it, goes to the one
  folder holding it (of several, the ones holding it, its folder, files of its extension; a way out is left as
  written); a file where a folder is taken is the server's folder. Where the message says "repository" and one
  folder is one, a new file goes there.
- `folders.file_said`: where a file is taken and the message names one file, a path naming no file the person
  named, or naming it in no folder of the server's, is that file; a name alone ending one file the person named is
  that file.
- `folders.file_listed`: a folder given for a file is its one file the last listing named and the message speaks of.
- `folders.held_file`: a folder of the server's given for a file, where the message names no file, is the one file
  its server holds that the message says a word of ("snacks at choir" of `choir-rota.xlsx`).
- `folders.folder_said`: a server's folder given where a folder is taken, while the message names one folder inside
  it, is that folder.
- `folders.file_info`: a question about a named file's size or times (modified, created…) goes to the tools that take
  a file whose name or first sentence says they tell them (info, metadata, stat, size).
- `folders.file_requests`: a list of objects that takes files: each object's file placed; where none holds one, one
  object per file the message names, under the key its schema or description names for a file."""

from __future__ import annotations

import glob
import os
import posixpath
import re
from typing import Callable, Sequence

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.decision import Decision, Shape
from sidespin.tooluse.model import Model
from sidespin.tooluse.offer import held_names
from sidespin.tooluse.values import QUOTED, REQUEST_AT, asks_change, reads, telling_words, words_of

__all__ = ["Folders", "files_named", "folders_named"]

_FILE = re.compile(r"(?<![\w./~@-])((?:[\w-]+/)*[\w-]+\.[a-z][a-z0-9]{0,4})(?![\w/@])", re.IGNORECASE)
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])~?/(?:[\w.-]+/)*[\w-]+\.[a-z][a-z0-9]{0,4}(?![\w/@])", re.IGNORECASE)
_KEY = re.compile(r'"(\w+)"\s*:')  # a key of an example object a description shows
_DOMAINS = frozenset("com org net io co gov edu ai app dev info".split())
# a change of a file's value or line; not a version control's verbs
_EDITS = re.compile(REQUEST_AT + r"(?:set|change|replace|edit|update|turn|raise|lower|increase|decrease|reduce|bump|"
                    r"switch|add|append|insert|remove|delete|rename|mets|mettez|change[rz]?|remplace[rz]?|baisse[rz]?|"
                    r"augmente[rz]?|ajoute[rz]?|supprime[rz]?|stell\w*|setz\w*|[äa]nder\w*|senk\w*|erh[öo]h\w*|"
                    r"f[üu]g\w*|l[öo]sch\w*|pon|ponga|cambia|baja|sube|a[ñn]ade|borra|quita|imposta|abbassa|alza|"
                    r"aggiungi)\b|\b(?:instead|rather than|plut[ôo]t|stattdessen|en (?:su|vez)|invece)\b")  # replaced
_FOLDER_WORD = re.compile(r"(?i)\b(?:folders?|director(?:y|ies)|dossiers?|r[ée]pertoires?|ordner|verzeichnis(?:se)?|"
                          r"carpetas?|directorios?|cartell[ae])\b")
_REPOSITORY = re.compile(r"(?i)\b(?:repos?|repositor(?:y|ies|ios?|ium)|d[ée]p[ôo]ts?)\b")  # a version control's
_ABOUT_FILE = re.compile(r"(?i)\b(?:when|wann|quand|cu[áa]ndo|quando)\b.{0,60}\b(?:modifi\w*|changed|edited|created|"
                         r"updated|ge[äa]ndert|bearbeitet|erstellt|cambi\w*|cr[ée]{1,2}[ée]?\w*)|\b(?:how (?:big|large)|"
                         r"file size|size of|gr[öo](?:ß|ss)e?|taille|tama[ñn]o|dimensione|metadata|"
                         r"m[ée]tadonn[ée]es)\b")  # a file's own size and times asked
_INFO = re.compile(r"(?i)\b(?:info|information|metadata|stat|stats|size)\b")  # what tells a file's size and times
_FILES_WORD = re.compile(r"(?i)\b(?:files|fichiers|dateien|archivos|ficheros)\b")  # the person's files, as a whole
_KINDS = (r"markdown|md|te?xt|txt|texte|pdfs?|csv|json|ya?ml|html?|xml|python|py|javascript|js|typescript|ts|images?|"
          r"photos?|png|jpe?g|svg|logs?|word|docx?|excel|xlsx?|zip|sql|shell|sh|bilder?|im[áa]genes|immagini|\*?\.\w{1,5}")
_FILE_WORDS = r"files?|fichiers?|dateie?n?|archivos?|ficheros?"
_KIND = re.compile(rf"(?i)(?:(?<!\w)(?:{_KINDS})[\s-]+(?:\w+[\s-]+)??(?:{_FILE_WORDS})\b|\b(?:{_FILE_WORDS})\s+"
                   rf"(?:\w+\s+)?(?:{_KINDS})(?!\w))")  # files of a kind: "markdown files", "fichiers PDF", "*.md"
_PATTERN = re.compile(r"(?i)\b(?:glob|pattern|wildcard)s?\b|\*\.")  # a parameter that takes files by a pattern
_SHORT = 5  # words of a message at most that may speak of the file before without naming it ("turn it down to 4")
_PATH_NAMES = frozenset({"path", "paths", "file", "files", "filename", "filepath", "source", "destination"})
_FOLDER_NAMES = frozenset({"dir", "directory", "folder", "repo", "repository", "root", "cwd", "workspace", "workdir"})
_GENERAL = frozenset({"file", "files", "dir", "dirs", "directory", "directories", "folder", "folders"})  # any file


def files_named(text: str) -> list[str]:
    """The files a message names with an extension, with their folders ("notes/ideas.md"); never ".." nor absolute."""
    return [name for name in dict.fromkeys(_FILE.findall(text))
            if name.rsplit(".", 1)[1].lower() not in _DOMAINS and "@" not in name]


def folders_named(text: str, places: Sequence[str]) -> list[str]:
    """The folders inside `places` a message names ("name/", or any word where it says "folder"); never a way up."""
    said = re.findall(r"[\w][\w./-]*/" if not _FOLDER_WORD.search(text) else r"[\w][\w./-]*", text)
    return [word for word in dict.fromkeys(w.rstrip("./") for w in said)
            if ".." not in word.split("/") and any(os.path.isdir(posixpath.join(p, word)) for p in places)]


def _says(name: str, words: frozenset[str]) -> bool:
    """Whether a name holds one of `words` ("repo_path" says "path")."""
    return bool(set(re.findall(r"[a-z]+", name.lower())) & words)


def _takes_file(tool: Tool, name: str) -> bool:
    """Whether parameter `name` takes a file: its name says a path or a file, or it is the one required parameter, a
    list, of a tool whose name says files (`read_files(requests)`); neither it nor its tool's name says a folder."""
    listed = tool.required == [name] and (tool.parameters.get(name) or {}).get("type") == "array"
    said = _says(name, _PATH_NAMES) or (listed and _says(tool.name, _PATH_NAMES))
    return said and not _says(name, _FOLDER_NAMES) and not _says(tool.name, _FOLDER_NAMES)


def _takes_text(tool: Tool) -> bool:
    """Whether a tool requires a text besides its files and folders (`write_file(path, content)`; not `git_add`)."""
    return any((tool.parameters.get(n) or {}).get("type") == "string" and not (_takes_file(tool, n) or _takes_place(
        tool, n)) for n in tool.required)


def _homes(text: str, tools: Sequence[Tool]) -> set[str]:
    """The folders of `tools`' servers that hold a file the message names (in them or one level down), the nearest;
    where none does (a new file), those holding files of its extension."""
    places, named = {p for t in tools for p in t.places}, files_named(text)
    found: set[str] = set()
    for patterns in ([glob.escape(f) for f in named], ["*." + glob.escape(f.rsplit(".", 1)[1]) for f in named]):
        found = found or {m for p in places for f in patterns
                          for m in glob.glob(glob.escape(p) + "/" + f) + glob.glob(glob.escape(p) + "/*/" + f)}
    return {max((p for p in places if _inside(m, p)), key=len) for m in found}


def _by_pattern(tool: Tool) -> bool:
    """Whether a tool takes files by a pattern: a parameter whose name or description says glob, pattern, wildcard."""
    return any(_PATTERN.search(f"{name} {(schema or {}).get('description') or ''}") for name, schema in
               tool.parameters.items() if isinstance(schema, dict))


def _takes_place(tool: Tool, name: str) -> bool:
    """Whether parameter `name` takes a folder: it says so, or takes a path and its tool's name says folder."""
    return _says(name, _FOLDER_NAMES) or (_says(tool.name, _FOLDER_NAMES) and _says(name, _PATH_NAMES))


def _taking(takes: Callable[[Tool, str], bool], tools: Sequence[Tool], *, reading: bool,
            actions: bool = False) -> list[Tool]:
    """The tools of folder servers with a parameter `takes` accepts; with `reading`, those that only read (with
    `actions`, also those one of whose actions reads: `values.reads`)."""
    return [tool for tool in tools if tool.places and (not reading or reads(tool, tools, actions=actions))
            and any(takes(tool, name) for name in tool.parameters)]


class Folders(Shape):
    id = "folders"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(tool.places for tool in tools)

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        message = decision.talk.last
        reading = not asks_change(message)
        if files_named(message) or _ABSOLUTE.search(message):  # its table, unless another server's folder holds it
            held = not (homes := _homes(message, decision.tools)) or homes & {p for t in tools for p in t.places}
            new = asks_change(message, new=True)  # to make or add: a tool that takes what is written
            takers = [t for t in _taking(_takes_file, tools, reading=reading) if not new or _takes_text(t)]
            return "folders.file_named" if held and takers else None
        folders = _taking(_takes_place, tools, reading=reading, actions=True)
        if folders and folders_named(message, [p for t in folders for p in t.places]):
            return "folders.folder_named"
        if folders and reading and _FILES_WORD.search(message):  # "What files do I have?", "dans mes fichiers": of
            every = _taking(_takes_place, decision.tools, reading=reading, actions=True)  # a tool named for files or
            general = {t.name for t in every if _says(t.name, _GENERAL)}  # folders, where one is, not for a kind of
            return "folders.files_asked" if not general or general & {t.name for t in folders} else None  # them
        edits = _EDITS.search(QUOTED.sub(" ", message))  # a quoted text's words are what is written, not asked
        return "folders.file_before" if edits and _of_file_before(decision, tools) else None

    def narrow(self, decision: Decision) -> dict[str, Tool]:
        changing = "folders.file_before" in decision.notes or asks_change(decision.talk.last)  # file_before asks one
        offered = list(decision.names.values())
        kept: list[Tool] = []
        if {"folders.file_before", "folders.file_named"} & set(decision.notes):
            kept = [t for t in _taking(_takes_file, offered, reading=not changing)
                    if not (changing and reads(t, offered))]
            if not changing and _ABOUT_FILE.search(decision.talk.last) and (info := [t for t in _taking(
                    _takes_file, offered, reading=True, actions=True) if _INFO.search(
                    f"{' '.join(words_of(t.name))} {re.split(r'[.:]', t.description, maxsplit=1)[0]}")]):
                kept = info  # a file's size or time asked: a tool that tells them, not its text
                decision.notes.append("folders.file_info")
        elif {"folders.folder_named", "folders.files_asked"} & set(decision.notes):
            kept = _taking(_takes_place, offered, reading=not changing, actions=True)
            if _KIND.search(decision.talk.last) and (found := [t for t in offered if t.places and _by_pattern(t) and (
                    changing or reads(t, offered, actions=True))]):
                kept = found  # files of a kind: a tool that finds them by a pattern, not a listing of all
                decision.notes.append("folders.kind_of_file")
        return {t.name: t for t in kept} or decision.names

    async def amend(self, decision: Decision, call: ToolCall, model: Model, written: str) -> ToolCall | None:
        tool = decision.names[call.name]
        places = [place.rstrip("/") for place in tool.places]
        arguments = dict(call.arguments)
        for name, value in call.arguments.items():
            if places and isinstance(value, str) and value.strip() and (
                    _takes_place(tool, name) or _takes_file(tool, name)):
                arguments[name] = _placed(decision, tool, name, _said_file(decision, value, places), places)
            elif places and isinstance(value, list) and value and _takes_file(tool, name):
                arguments[name] = _requests(decision, tool, name, value, places)
        return ToolCall(call.name, arguments, call.id)


def _requests(decision: Decision, tool: Tool, name: str, value: list, places: list[str]) -> list:
    """A list of objects that takes files (`folders.file_requests`): each one's file, under the key its items' schema
    or the description's example names (`"path": "/abs/file"`), placed; else one per file named; others as they are."""
    items = (tool.parameters.get(name) or {}).get("items") or {}
    key = next((k for k in [*(items.get("properties") or {}), *_KEY.findall(tool.description)]
                if _says(k, _PATH_NAMES)), None)
    if key is None or not all(isinstance(item, dict) for item in value):
        return value
    kept = [i for i in value if isinstance(i.get(key), str)] or [{key: f} for f in files_named(decision.talk.last)]
    decision.notes += ["folders.file_requests"] if kept else []
    placed = [{**i, key: _placed(decision, tool, name, _said_file(decision, i[key], places), places)} for i in kept]
    return placed or value


def _of_file_before(decision: Decision, tools: Sequence[Tool]) -> bool:
    """Whether the message, short or sharing a word with its result, is about the file the last call of `tools` took."""
    return any(t.name == decision.talk.last_called for t in _taking(_takes_file, tools, reading=False)) and (
        len(words_of(decision.talk.last)) <= _SHORT or decision.talk.about_last_result)


def _inside(path: str, place: str) -> bool:
    return path == place or path.startswith(place + "/")


def _said_file(decision: Decision, value: str, places: list[str]) -> str:
    """`value`, or the one file the person named whose last part it is, written alone (`folders.file_said`)."""
    alone = next((value[len(p) + 1:] for p in places if value.startswith(p + "/")), value)
    same = [f for f in files_named(decision.talk.told) if "/" in f and f.rsplit("/", 1)[1] == alone]
    if len(same) == 1 and "/" not in alone:
        decision.notes.append("folders.file_said")
        return same[0]
    return value


def _held_file(decision: Decision, tool: Tool) -> str | None:
    """The one file its server holds that the message says a word of (`offer.held_names`: "choir" of
    `choir-rota.xlsx`); None for none or several."""
    files = held_names([tool], decision.talk.last, whole=False, files=True)
    return files[0] if len(files) == 1 else None


def _placed(decision: Decision, tool: Tool, name: str, value: str, places: list[str]) -> str:
    """`value` of parameter `name` as a path the server can open in one of its `places` (the module's rules)."""
    if value.startswith("~") or "://" in value:
        return value
    last = decision.talk.answered[-1] if "folders.file_before" in decision.notes and decision.talk.answered else None
    took = next((t for t in decision.tools if last is not None and t.name == last.name), None)
    before = [v for k, v in last.arguments.items() if isinstance(v, str) and _takes_file(took, k)] if took else []
    if _takes_file(tool, name) and len(before) == 1 and value != before[0]:  # the file the change is of
        return before[0]
    named, base = files_named(decision.talk.last), posixpath.basename(value)
    elsewhere = value.startswith("/") and not any(_inside(value, p) for p in places)  # in no folder of the server's
    if _takes_file(tool, name) and len(named) == 1 and (base not in {posixpath.basename(f) for f in files_named(
            decision.talk.told)} or elsewhere and base == posixpath.basename(named[0]) != named[0]):
        decision.notes.append("folders.file_said")
        value = named[0]
    if _takes_file(tool, name) and not named and value.rstrip("/") in places and (held := _held_file(decision, tool)):
        decision.notes.append("folders.held_file")  # a folder given for a file: the held file the message speaks of
        value = posixpath.join(value.rstrip("/"), held)
    said = _REPOSITORY.search(decision.talk.last)  # "repository": of the folders, the one that is a repository
    repos = [p for p in places if said and os.path.isdir(posixpath.join(p, ".git"))]
    if (path := _resolved(value, places) or _resolved(value, repos)) is None:
        return value
    home = next((p for p in places if _inside(path, p)), None)
    if len(repos) == 1 and home not in (None, repos[0]) and not os.path.exists(path):  # a new file: in it
        path = repos[0] + path[len(home):]
    inner = folders_named(decision.talk.last, places) if _takes_place(tool, name) and path in places else []
    if len(inner) == 1 and (path := _resolved(inner[0], places) or path) != value:  # a server's folder given
        decision.notes.append("folders.folder_said")
    if _takes_file(tool, name) and os.path.isdir(path) and (listed := _listed(decision, path)):
        decision.notes.append("folders.file_listed")
        return listed
    folder = _takes_place(tool, name) and files_named(posixpath.basename(path))  # a file where a folder is taken
    if path != value or folder:
        decision.notes.append("folders.inside")
    return next(p for p in places if _inside(path, p)) if folder else path


def _listed(decision: Decision, folder: str) -> str | None:
    """The one file of `folder` the last result lists that the message, naming no file, speaks of; else None."""
    if files_named(decision.talk.last) or not decision.talk.answered:
        return None
    said = set(telling_words(decision.talk.last))
    listed = [f for f in files_named(decision.talk.answered[-1].answer)
              if said & set(telling_words(f.rsplit(".", 1)[0])) and os.path.isfile(posixpath.join(folder, f))]
    return posixpath.join(folder, listed[0]) if len(set(listed)) == 1 else None


def _resolved(value: str, places: list[str]) -> str | None:
    """`value` inside the one of `places` holding it (or its folder); None where it climbs out or no one place does."""
    if (home := next((p for p in places if _inside(value, p)), None)) is not None:
        others = [p + value[len(home):] for p in places if p != home and os.path.exists(p + value[len(home):])]
        return others[0] if not os.path.exists(value) and len(others) == 1 else value
    relative = value
    if value.startswith("/"):
        if not (parents := [posixpath.dirname(p) for p in places if value.startswith(posixpath.dirname(p) + "/")]):
            return None
        relative = value[len(parents[0]) + 1:]
    found = [p for p in places if _inside(posixpath.normpath(posixpath.join(p, relative)), p)]
    for holds in (os.path.exists, lambda path: os.path.isdir(posixpath.dirname(path)), _like):  # it, its folder…
        if len(found) > 1 and (held := [p for p in found if holds(posixpath.join(p, relative))]):
            found = held
    return posixpath.normpath(posixpath.join(found[0], relative)) if len(found) == 1 else None


def _like(path: str) -> bool:
    """Whether the folder of `path` holds a file of its extension."""
    extension = posixpath.splitext(path)[1]
    return bool(extension) and bool(glob.glob(glob.escape(posixpath.dirname(path)) + "/*" + glob.escape(extension)))
