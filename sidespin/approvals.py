"""Approvals: which tool calls run at once, which wait for a person, which are refused.

A policy per tool: `auto` (run at once; the terminal chat's default), `ask`
(the web's default for tools not marked read-only) or `deny`. How a tool's
policy is chosen, first rule that applies:

1. `per_tool` (configuration) names it;
2. the default is `deny`: everything is denied;
3. the tool is destructive (MCP `destructiveHint`): ask, whatever was remembered;
4. a person answered `yA` or `yO` for it in this conversation: auto (on this machine: not in the
   turns an imported file brought, see `Transcript.imported_turns`);
5. the tool is read-only (MCP `readOnlyHint`): auto, even when the default is ask;
6. the default.

A person answers with Parley's keys (seed 002); the answer is written after
the call's `❓:` marker, so reopening a conversation restores what was remembered.
"""

from __future__ import annotations

from typing import Iterable, Literal, get_args

from loguru import logger

from sidespin.tools import Tool, ToolCall
from sidespin.transcript import Transcript, Turn
from sidespin.transcript.markers import CHOICES, Choice  # the keys the transcript writes after ❓:

__all__ = ["POLICIES", "Policy", "Choice", "CHOICES", "MEANINGS", "Approvals"]


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


def _check_policy(policy: str, where: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"unknown approval policy {policy!r} for {where}; use one of {', '.join(POLICIES)}")
    return policy


def _remembered(turns: Iterable[Turn]) -> set[str]:
    """The tools a `❓:[yA]` or `❓:[yO]` of these turns remembers."""
    return {proposal.call.name for turn in turns for proposal in turn.proposals() if proposal.decision in ("yA", "yO")}


class Approvals:
    """The approval policy of one conversation, with the tools a person chose to remember."""

    def __init__(
        self,
        default: Policy = "ask",
        per_tool: dict[str, str] | None = None,
        remembered: Iterable[str] | None = None,
    ) -> None:
        self.default = _check_policy(default, "the default")
        self.per_tool = {name: _check_policy(policy, name) for name, policy in (per_tool or {}).items()}
        self.remembered: set[str] = set(remembered or ())

    @classmethod
    def from_transcript(
        cls, transcript: Transcript, default: Policy = "ask", per_tool: dict[str, Policy] | None = None
    ) -> Approvals:
        """Restore the remembered tools: every tool with a `❓:[yA]` or `❓:[yO]` in the file, except in the
        turns that came with an imported file (`Transcript.imported_turns`): a remembered approval is a
        person's choice on this machine, never a file's text."""
        skipped = transcript.imported_turns
        remembered = _remembered(transcript.turns[skipped:])
        ignored = _remembered(transcript.turns[:skipped]) - remembered
        if ignored:
            logger.debug("APPROVALS_IMPORTED_IGNORED {}: remembered in an imported file, not here", ",".join(sorted(ignored)))
        return cls(default, per_tool, remembered)

    def policy_for(self, tool: Tool) -> Policy:
        """auto, ask or deny for a call of `tool` (the rules are in the module docstring)."""
        if tool.name in self.per_tool:
            return self.per_tool[tool.name]
        if self.default == "deny":
            return "deny"
        if tool.destructive:
            return "ask"
        if tool.name in self.remembered or tool.read_only:
            return "auto"
        return self.default

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
