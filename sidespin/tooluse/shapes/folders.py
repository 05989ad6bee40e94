"""The `folders` shape: servers that work in folders the configuration names (`Tool.places`).

A person names a file as they see it ("notes/ideas.md", "budget.csv"), not by the absolute path such a server
needs. Rules:

- `folders.file_named` (shortlist, whether, which): a message that names a file (a name with an extension, or a
  path in a folder) asks for that file: a folder server's table is read, and a call is written and checked down
  to `NAMED_FLOOR`, by one of the tools of that server that only read (it marks them read-only), unless the
  message asks to make or change something.
- `folders.inside` (arguments): a path written relative to nothing ("notes/todo.md") by a tool whose server works
  in one folder is that path inside the folder; one that would climb out of it ("../../etc/passwd") is left as
  written, for the server's own check and the person's approval.
- `folders.file_said` (arguments): a path written as the folder itself, by a tool that only reads, where the
  message names one file, is that file inside the folder.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Sequence

from sidespin.tools import Tool, ToolCall
from sidespin.tooluse.decision import Decision, Shape

if TYPE_CHECKING:
    from sidespin.tooluse.model import Model

__all__ = ["Folders", "files_named"]

_FILE = re.compile(r"(?<![\w./~@-])((?:[\w-]+/)*[\w-]+\.[a-z][a-z0-9]{0,4})(?![\w/@])", re.IGNORECASE)
_DOMAINS = frozenset("com org net io co gov edu ai app dev info".split())
# a request to make or change something: the file it names is to be written, not read
_CHANGES = re.compile(r"(?i)\b(?:create|make|write|save|add|append|insert|put|set|change|replace|edit|update|delete|"
                      r"remove|rename|move|copy|cr[ée]e[rz]?|[ée]cri[st]|ajoute[rz]?|modifie[rz]?|supprime[rz]?|"
                      r"renomme[rz]?|d[ée]place[rz]?|erstelle|schreib\w*|f[üu]ge|[äa]ndere|l[öo]sche|speicher\w*|"
                      r"crea[r]?|escribe|a[ñn]ade|cambia|borra|elimina|mueve|guarda|scrivi|aggiungi|sposta|salva)\b")
_PATH_NAMES = frozenset({"path", "paths", "file", "filename", "filepath", "source", "destination", "directory",
                         "dir", "folder"})


def files_named(text: str) -> list[str]:
    """The files a message names: names with an extension, with the folders before them ("notes/ideas.md")."""
    return [name for name in dict.fromkeys(_FILE.findall(text))
            if name.rsplit(".", 1)[1].lower() not in _DOMAINS and "@" not in name]


def _readers(tools: Sequence[Tool]) -> list[Tool]:
    return [tool for tool in tools if tool.places and tool.read_only]


def _is_path(name: str) -> bool:
    return bool(set(re.findall(r"[a-z]+", name.lower())) & _PATH_NAMES)


class Folders(Shape):
    id = "folders"

    def applies(self, tools: Sequence[Tool]) -> bool:
        return any(tool.places for tool in tools)

    def favours(self, decision: Decision, tools: Sequence[Tool]) -> str | None:
        if files_named(decision.talk.last) and _readers(tools):
            return "folders.file_named"
        return None

    def narrow(self, decision: Decision) -> dict[str, Tool]:
        if "folders.file_named" not in decision.notes or _CHANGES.search(decision.talk.last):
            return decision.names
        readers = {t.name: t for t in _readers(decision.names.values())}
        return readers or decision.names

    async def amend(self, decision: Decision, call: ToolCall, model: "Model", written: str) -> ToolCall | None:
        tool = decision.tool(call.name)
        if len(tool.places) != 1:
            return call
        place = tool.places[0].rstrip("/")
        named = files_named(decision.talk.last)
        arguments = dict(call.arguments)
        for name, value in call.arguments.items():
            if not isinstance(value, str) or not _is_path(name) or not value.strip():
                continue
            inside = posixpath.normpath(posixpath.join(place, value))
            if not value.startswith(("/", "~")) and "://" not in value and (inside == place or inside.startswith(place + "/")):
                arguments[name] = inside
                decision.note("folders.inside")
            elif value.rstrip("/") == place and tool.read_only and len(named) == 1:
                arguments[name] = posixpath.join(place, named[0])
                decision.note("folders.file_said")
        return ToolCall(call.name, arguments, call.id)
