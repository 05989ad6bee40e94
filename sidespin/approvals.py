"""Approvals: which tool calls run at once, which wait for a person, which are refused.

A policy per tool: `auto` (run at once; the terminal chat's default), `ask`
(the web's default for tools not marked read-only) or `deny`. How a call's
policy is chosen, first rule that applies:

1. `per_tool` (configuration) says `deny` or `ask` for its tool;
2. the default is `deny` and `per_tool` does not say `auto`: denied;
3. the tool's server works in folders (`Tool.places`) and a path the call names lies outside them
   (`/etc/passwd`, `../../etc/passwd`, a symbolic link out of the folder): ask, whatever decided the
   call, unless the person approved everything beforehand (`approve_all`: `sidespin ask --yes`);
4. `per_tool` says `auto`, or `approve_all`: auto;
5. the tool is destructive (MCP `destructiveHint`): ask, whatever was remembered;
6. a person answered `yA` or `yO` for it in this conversation: auto (on this machine: not in the
   turns an imported file brought, see `Transcript.imported_turns`);
7. the default is `auto`, the tool is not read-only, and the call follows a tool result of the same
   turn: ask. A result's author (a web page, a file, a server) may have written the request the
   model now obeys; what the person asked for directly still runs at once;
8. the tool is read-only (MCP `readOnlyHint`, unless its server's hints are not trusted): auto, even
   when the default is ask;
9. the default.

A person answers with Parley's keys (seed 002); the answer is written after
the call's `❓:` marker, so reopening a conversation restores what was remembered.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Literal, NamedTuple, get_args
from urllib.parse import unquote, urlsplit

from loguru import logger

from sidespin.tools import Tool, ToolCall
from sidespin.transcript import Transcript, Turn
from sidespin.transcript.markers import CHOICES, Choice  # the keys the transcript writes after ❓:

__all__ = ["POLICIES", "Policy", "Ruling", "Choice", "CHOICES", "MEANINGS", "Approvals", "outside_places"]


Policy = Literal["auto", "ask", "deny"]  # what happens to a call of a tool: run it, ask a person, refuse it
POLICIES: tuple[Policy, ...] = get_args(Policy)

MEANINGS: dict[Choice, str] = {
    "ya": "yes to all the proposals",
    "yA": "yes to all, and remember each one's tool for this conversation",
    "yo": "yes to this one",
    "yO": "yes to this one, and remember its tool for this conversation",
    "n": "no (the model is told the call was refused)",
}
assert tuple(MEANINGS) == CHOICES

AFTER_RESULT = ("it follows a tool result of this turn, whose author may have asked for it; it changes "
                "something, so a person decides")


class Ruling(NamedTuple):
    """What happens to one call, and why, in words for a person (empty when nothing is worth saying)."""

    policy: Policy
    why: str = ""


def _check_policy(policy: str, where: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"unknown approval policy {policy!r} for {where}; use one of {', '.join(POLICIES)}")
    return policy


def _remembered(turns: Iterable[Turn]) -> set[str]:
    """The tools a `❓:[yA]` or `❓:[yO]` of these turns remembers."""
    return {proposal.call.name for turn in turns for proposal in turn.proposals() if proposal.decision in ("yA", "yO")}


# ---------------------------------------------------------------- paths outside a server's folders

_PATH_PARAMETER = re.compile(r"path|file|dir|folder|source|destination|repo|root", re.IGNORECASE)


def _named_paths(arguments: dict[str, Any]) -> list[str]:
    """The values of a call that name places on disk: every string (or list of strings) of a parameter whose name
    says path, file, folder …, and any other string that reads as an absolute path or a file: URL."""
    found: list[str] = []
    for name, value in arguments.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if not isinstance(item, str):
                continue
            if _PATH_PARAMETER.search(name) or (item.startswith(("/", "~/", "file:")) and "\n" not in item):
                found.append(item)
    return found


def _real(text: str, base: Path) -> Path:
    """Where a path leads: `~` expanded, a file: URL read, a relative path taken from `base`, every `..` and
    symbolic link that exists followed."""
    if text.startswith("file:"):
        text = unquote(urlsplit(text).path)
    path = Path(text).expanduser()
    return Path(os.path.realpath(base / path))


def outside_places(tool: Tool, arguments: dict[str, Any]) -> list[str]:
    """The paths a call of `tool` names that lie outside every folder its server works in (`Tool.places`), as the
    call wrote them; [] when the tool's server names no folder. A relative path is taken from the first folder."""
    if not tool.places:
        return []
    try:
        folders = [Path(os.path.realpath(Path(place).expanduser())) for place in tool.places]
        outside = []
        for text in _named_paths(arguments):
            where = _real(text, folders[0])
            if not any(where == folder or folder in where.parents for folder in folders):
                outside.append(text)
        return outside
    except (OSError, ValueError):  # a path that cannot even be resolved (a NUL byte, a loop of links): not inside
        return _named_paths(arguments)


class Approvals:
    """The approval policy of one conversation, with the tools a person chose to remember."""

    def __init__(
        self,
        default: Policy = "ask",
        per_tool: dict[str, str] | None = None,
        remembered: Iterable[str] | None = None,
        *,
        approve_all: bool = False,
    ) -> None:
        """`approve_all`: the person approved every call beforehand (`sidespin ask --yes`); a tool configured
        "deny" or "ask" keeps its setting."""
        self.default = _check_policy(default, "the default")
        self.per_tool = {name: _check_policy(policy, name) for name, policy in (per_tool or {}).items()}
        self.remembered: set[str] = set(remembered or ())
        self.approve_all = approve_all

    @classmethod
    def from_transcript(
        cls, transcript: Transcript, default: Policy = "ask", per_tool: dict[str, Policy] | None = None, *,
        approve_all: bool = False,
    ) -> Approvals:
        """Restore the remembered tools: every tool with a `❓:[yA]` or `❓:[yO]` in the file, except in the
        turns that came with an imported file (`Transcript.imported_turns`): a remembered approval is a
        person's choice on this machine, never a file's text."""
        skipped = transcript.imported_turns
        remembered = _remembered(transcript.turns[skipped:])
        ignored = _remembered(transcript.turns[:skipped]) - remembered
        if ignored:
            logger.debug("APPROVALS_IMPORTED_IGNORED {}: remembered in an imported file, not here", ",".join(sorted(ignored)))
        return cls(default, per_tool, remembered, approve_all=approve_all)

    def ruling(self, tool: Tool, call: ToolCall | None = None, after_result: bool = False) -> Ruling:
        """auto, ask or deny for a call of `tool` with the reason (the rules are in the module docstring).

        `call`: the call itself, whose paths are checked against its server's folders (None: the tool alone);
        `after_result`: a tool result of the same turn reached the model before it made this call."""
        configured = self.per_tool.get(tool.name)
        if configured in ("deny", "ask"):
            return Ruling(configured, f"config.json says \"approval\": \"{configured}\" for {tool.name}")
        if self.default == "deny" and configured is None:
            return Ruling("deny", "the approval policy is deny")
        outside = outside_places(tool, call.arguments) if call is not None else []
        if outside and not self.approve_all:
            folders = ", ".join(tool.places)
            return Ruling("ask", f"{', '.join(map(repr, outside))} lies outside the folders its server works in "
                                 f"({folders})")
        if configured == "auto" or self.approve_all:
            return Ruling("auto")
        if tool.destructive:
            return Ruling("ask", "it is marked destructive")
        if tool.name in self.remembered:
            return Ruling("auto")
        if self.default == "auto" and after_result and not tool.read_only:
            return Ruling("ask", AFTER_RESULT)
        if tool.read_only:
            return Ruling("auto")
        return Ruling(self.default, "it is not marked read-only" if self.default == "ask" else "")

    def policy_for(self, tool: Tool, call: ToolCall | None = None, after_result: bool = False) -> Policy:
        """auto, ask or deny for a call of `tool` (`ruling` without its reason)."""
        return self.ruling(tool, call, after_result).policy

    def apply_choice(self, choice: str, calls: list[ToolCall], target: str | None = None) -> dict[str, bool]:
        """A person's answer to the pending `calls`: {call id: run it?} for each call it decides.

        `ya`/`yA` approve every call (`yA` also remembers each one's tool); `yo`/`yO`
        approve the `target` call only (`yO` also remembers its tool); `n` refuses the
        target, or every call when `target` is None. Calls not in the answer stay pending.
        """
        if choice not in CHOICES:
            keys = ", ".join(f"{key} ({meaning})" for key, meaning in MEANINGS.items())
            raise ValueError(f"unknown choice {choice!r}; the choices are {keys}")
        if choice in ("ya", "yA"):
            if choice == "yA":
                self.remembered.update(call.name for call in calls)
            return {call.id: True for call in calls}
        if choice == "n" and target is None:
            return {call.id: False for call in calls}
        chosen = next((call for call in calls if call.id == target), None)
        if chosen is None:
            waiting = ", ".join(call.id for call in calls) or "none"
            raise ValueError(f"{choice} needs the id of a pending call; got {target!r} (pending: {waiting})")
        if choice == "yO":
            self.remembered.add(chosen.name)
        return {chosen.id: choice != "n"}
