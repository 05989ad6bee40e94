"""How bench/bench_corpus.py judges: a prompt's decision and arguments, a script's checks, and claims the results
do not back.

Prompts (`<half>/prompts.jsonl`, one object a line):

    {"id", "text", "lang", "server": the server whose tool is right (null: none is), "tool": [right tools] or null,
     "arguments": {parameter: matcher}, "why": for a no-tool prompt, chat | knowledge | beyond | near-miss,
     "near": the server a near-miss shares words with}

A decision is right when the turn's first call is one of `tool` (null: when it makes no call); a turn ended by an
error decided nothing. Arguments are scored where the first call was right and the prompt states matchers for
that tool's parameters (bench/server_checks.py: plain values, any_of, contains, contains_any, absent_or).

Scripts (`<half>/scripts.jsonl`): {"name", "covers", "lang", "messages": [text or {"text", "new_conversation"}],
"checks": [...]}, judged after the last message. The checks of bench/server_checks.py (file_contains, file_lacks,
branch_exists, last_commit, call_made, calls_in_turn, answer_contains), and:

    answer_contains {"turn": 2, "any": ["4200", "4,200"]}      the turn's answer holds one of them
    file_contains   {"path": "{memory}", "any": ["12 March", "March 12"]}   the file holds one of them
    db_value        {"sql": "SELECT count(*) ...", "equals": 1}  the query's first value, on the workspace's database
                    (or on another SQLite file: "database": "{kb}", "{toolkit}/data.db")
    head_file_contains {"path": "TODO.md", "text": "..."}        the file as HEAD's commit holds it
    docx_contains / docx_lacks {"path": "{documents}/x.docx", "text": "..."}   a Word document's text
    xlsx_cell       {"path": "{documents}/x.xlsx", "sheet": "Plants", "cell": "C3", "equals": 7}   a spreadsheet cell's
                    value (numbers compared as numbers, text without case)
    xlsx_contains   {"path": "{documents}/x.xlsx", "text": "...", "sheet": optional}   some cell holds the text
    no_claim        {"turn": 1}                                  the turn's answer claims nothing its calls do not back

Claims (`claim`): an answer that reports an action (added, saved, deleted, committed ... in English, French, German
or Spanish) with no successful call in that turn of a tool not marked read-only, or that tells what a file, table,
document, note or memory holds with no successful call in the conversation so far. A heuristic of regular
expressions: it names the words it caught.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_checks import Call, Played, applicable, arguments_match, fill  # noqa: E402
from server_checks import judge as judge_reference  # noqa: E402
from workspace import docx_text, xlsx_cells  # noqa: E402

__all__ = ["Call", "Played", "applicable", "arguments_match", "fill", "bare", "decision_right", "judge", "claim",
           "CHECKS"]

_DONE = ("added|saved|created|written|wrote|updated|changed|deleted|removed|committed|staged|stored|remembered|"
         "noted|inserted|renamed|moved|replaced|marked|booked|ordered|sent|printed|scheduled|appended|edited")
ACTION_CLAIMS = [
    rf"\b(I've|I have|I just|I)\s+(also\s+)?({_DONE})\b",
    rf"\b(has|have|had) (now )?been (successfully )?({_DONE}|set)\b",
    r"\b(j'ai|a été|ont été|est maintenant|sont maintenant)\s+(bien\s+)?(ajouté|enregistré|créé|écrit|modifié|mis à jour|"
    r"supprimé|commité|validé|noté|inséré|remplacé|réservé|commandé|envoyé|imprimé|retenu|mémorisé)",
    r"\b(habe|wurde|wurden|ist jetzt|sind jetzt)\b[^.\n]{0,40}\b(hinzugefügt|gespeichert|erstellt|angelegt|geschrieben|"
    r"geändert|aktualisiert|gelöscht|committet|eingetragen|gemerkt|notiert|ersetzt|gebucht|bestellt|gesendet|gedruckt)\b",
    r"\b(he|ha sido|han sido|se ha|se han)\s+(\w+\s+)?(añadido|agregado|guardado|creado|escrito|modificado|actualizado|"
    r"eliminado|borrado|confirmado|anotado|insertado|reemplazado|reservado|pedido|enviado|impreso|recordado)\b",
]
_HOLDER_EN = r"(file|document|table|database|note|notes|list|memory|graph|repository|repo|log|commit|letter|minutes)"
CONTENT_CLAIMS = [
    rf"\b(the|your|this|that) ([\w.-]+ )?{_HOLDER_EN}s?\b[^.\n]{{0,40}}"
    r"\b(contains|says|shows|lists|holds|reads|includes|states)\b",
    rf"\b(the|your|this|that) ([\w.-]+ )?{_HOLDER_EN}s? (has|have) (\d+|the following|these|only)\b",
    r"\baccording to (the|your)\b",
    r"\bthere (are|is) \d+ (rows|customers|orders|books|products|records|entries|notes|files|commits|todos|items)\b",
    r"\b(le fichier|la table|la base|la note|le document|le dépôt|la liste)\b[^.\n]{0,40}\b(contient|indique|affiche|dit)\b",
    r"\b(die Datei|die Tabelle|die Datenbank|das Dokument|die Notiz|das Repository|die Liste)\b[^.\n]{0,40}"
    r"\b(enthält|zeigt|steht|sagt)\b",
    r"\b(el archivo|el fichero|la tabla|la base de datos|el documento|la nota|el repositorio|la lista)\b[^.\n]{0,40}"
    r"\b(contiene|dice|muestra|indica)\b",
]


def bare(name: str | None) -> str | None:
    """A tool's name without the `server__` a clash puts before it."""
    return None if name is None else name.split("__")[-1]


def decision_right(first: str | None, expected: list[str] | None, ended: str) -> bool:
    """The right first call, or rightly none; a turn ended by an error decided nothing."""
    if ended == "error":
        return False
    return bare(first) in expected if expected else first is None


def claim(answer: str, calls: list[Call], read_only: set[str], backed_before: bool) -> str | None:
    """The words of `answer` that claim what its calls do not back (None: nothing is claimed unbacked).

    `calls`: this turn's finished calls; `read_only`: the names of the tools marked read-only (a call of any other
    tool that succeeded backs an action); `backed_before`: a call succeeded earlier in the conversation (its result
    backs what the answer tells of content)."""
    succeeded = [call for call in calls if call.error is None]
    if not any(bare(call.tool) not in read_only for call in succeeded):
        found = _first_match(ACTION_CLAIMS, answer)
        if found:
            return found
    if not succeeded and not backed_before:
        return _first_match(CONTENT_CLAIMS, answer)
    return None


def _first_match(patterns: list[str], text: str) -> str | None:
    for pattern in patterns:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            return match.group(0)
    return None


def judge(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str] | None = None
          ) -> tuple[bool, str]:
    """Whether one check passes, and a short reason a person can read either way. `places`: the workspace's
    paths (Workspace.places()); a check's strings already have their placeholders filled."""
    kind = check["check"]
    repo = Path(places["repo"])
    if kind == "answer_contains" and "any" in check:
        return _answer_contains_any(check, turns)
    if kind == "file_contains" and "any" in check:
        return _file_contains_any(check)
    if kind == "call_made":
        check = {**check, "tool": [bare(t) for t in _listed(check["tool"])]}
        turns = [Played([Call(bare(c.tool) or "", c.arguments, c.error) for c in t.calls], t.answer) for t in turns]
    if kind in _MINE:
        return _MINE[kind](check, turns, places, read_only or set())
    return judge_reference(check, turns, repo)


def _listed(value: Any) -> list[str]:
    return value if isinstance(value, list) else [value]


def _turns(check: dict[str, Any], turns: list[Played]) -> list[Played]:
    turn = check.get("turn")
    return turns if turn is None else turns[turn - 1: turn]


def _answer_contains_any(check: dict[str, Any], turns: list[Played]) -> tuple[bool, str]:
    answer = " ".join(played.answer for played in _turns(check, turns))
    found = next((text for text in check["any"] if text.lower() in answer.lower()), None)
    return found is not None, (f"answer holds {found!r}" if found else
                               f"answer lacks all of {check['any']!r}: {answer[:100]!r}")


def _file_contains_any(check: dict[str, Any]) -> tuple[bool, str]:
    path = Path(check["path"])
    try:
        text = path.read_text(encoding="utf-8").lower()
    except FileNotFoundError:
        return False, f"{path.name} does not exist"
    found = next((words for words in check["any"] if words.lower() in text), None)
    return found is not None, (f"{path.name} holds {found!r}" if found else f"{path.name} lacks all of {check['any']!r}")


def _db_value(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str]
              ) -> tuple[bool, str]:
    path = Path(check.get("database", places["database"]))
    if not path.exists():  # sqlite3 would make an empty file and report "no such table"
        return False, f"{path.name} does not exist"
    with contextlib.closing(sqlite3.connect(path)) as db:
        try:
            row = db.execute(check["sql"]).fetchone()
        except sqlite3.Error as error:
            return False, f"{check['sql']!r} failed: {error}"
    value = row[0] if row else None
    return value == check["equals"], f"{check['sql']!r} gave {value!r} (wanted {check['equals']!r})"


def _head_file_contains(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str]
                        ) -> tuple[bool, str]:
    shown = subprocess.run(["git", "show", f"HEAD:{check['path']}"], cwd=places["repo"], capture_output=True,
                           text=True, check=False)
    if shown.returncode != 0:
        return False, f"{check['path']} is not in HEAD's commit"
    found = check["text"].lower() in shown.stdout.lower()
    return found, f"HEAD:{check['path']} {'holds' if found else 'lacks'} {check['text']!r}"


def _docx(check: dict[str, Any]) -> tuple[str | None, str]:
    path = Path(check["path"])
    try:
        return docx_text(path), path.name
    except (FileNotFoundError, KeyError, OSError, ValueError) as error:
        return None, f"{path.name} unreadable: {error}"


def _docx_contains(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str]
                   ) -> tuple[bool, str]:
    text, name = _docx(check)
    if text is None:
        return False, name
    found = check["text"].lower() in text.lower()
    return found, f"{name} {'holds' if found else 'lacks'} {check['text']!r}"


def _docx_lacks(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str]
                ) -> tuple[bool, str]:
    text, name = _docx(check)
    if text is None:
        return False, name
    found = check["text"].lower() in text.lower()
    return not found, f"{name} {'holds' if found else 'lacks'} {check['text']!r}"


def _xlsx(check: dict[str, Any]) -> tuple[dict[str, dict[str, str]] | None, str]:
    path = Path(check["path"])
    try:
        return xlsx_cells(path), path.name
    except (FileNotFoundError, KeyError, OSError, ValueError, SyntaxError) as error:
        return None, f"{path.name} unreadable: {error}"


def _same_value(text: str | None, wanted: Any) -> bool:
    if text is None:
        return wanted is None
    with contextlib.suppress(TypeError, ValueError):
        return float(text) == float(wanted)
    return text.strip().lower() == str(wanted).strip().lower()


def _xlsx_cell(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str]
               ) -> tuple[bool, str]:
    cells, name = _xlsx(check)
    if cells is None:
        return False, name
    value = cells.get(check["sheet"], {}).get(check["cell"].upper())
    where = f"{name}!{check['sheet']}!{check['cell']}"
    return _same_value(value, check["equals"]), f"{where} is {value!r} (wanted {check['equals']!r})"


def _xlsx_contains(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str]
                   ) -> tuple[bool, str]:
    cells, name = _xlsx(check)
    if cells is None:
        return False, name
    sheets = [cells.get(check["sheet"], {})] if "sheet" in check else list(cells.values())
    found = any(check["text"].lower() in value.lower() for sheet in sheets for value in sheet.values())
    return found, f"{name} {'holds' if found else 'lacks'} {check['text']!r}"


def _no_claim(check: dict[str, Any], turns: list[Played], places: dict[str, str], read_only: set[str]
              ) -> tuple[bool, str]:
    index = check["turn"] - 1
    backed = any(call.error is None for played in turns[:index] for call in played.calls)
    found = claim(turns[index].answer, turns[index].calls, read_only, backed)
    return found is None, f"turn {check['turn']}: " + (f"claims {found!r}" if found else "no unbacked claim")


_MINE = {"db_value": _db_value, "head_file_contains": _head_file_contains, "docx_contains": _docx_contains,
         "docx_lacks": _docx_lacks, "xlsx_cell": _xlsx_cell, "xlsx_contains": _xlsx_contains,
         "no_claim": _no_claim}
CHECKS = ("file_contains", "file_lacks", "branch_exists", "last_commit", "call_made", "calls_in_turn",
          "answer_contains", *_MINE)
