"""The one error hierarchy of sidespin.

Every error a person may see derives from `SidespinError`; each edge (HTTP
response, SSE event, CLI) turns it into a message with `str(error)`.

    SidespinError
    ├── ConfigError                 a bad mcp.json / config.json / environment value
    ├── ToolError
    │   ├── MalformedToolCall       the model wrote a call we cannot read
    │   ├── ToolNotFound            the call names a tool nobody registered
    │   ├── ToolSwitchedOff         the tool is switched off for this conversation
    │   ├── ToolNotOffered          the model is not offered the tool (a demo plugin held back), or no tool
    │   ├── BadArguments            arguments that do not fit the tool's schema
    │   ├── ToolFailed              the tool itself raised or reported an error
    │   └── ToolTimeout             the tool did not answer in time
    ├── BackendError                the language model could not be reached or answered badly
    ├── MCPServerError              an MCP server failed to start, died or misbehaved
    ├── AttachmentRefused           a resource attached to a message cannot go with it (unknown, unreadable, too big)
    ├── QuestionError               a person's answer to a server's question cannot be taken
    │   ├── BadAnswer               it does not fit the question's schema (the question stays open)
    │   ├── NoSuchQuestion          no question has that id
    │   └── QuestionClosed          the question was answered already, or its call ended
    ├── TranscriptError             a conversation file that cannot be read
    ├── NotSaved                    a conversation file that cannot be written (a full disk); it is as it was
    └── SearchStopped               a search ran out of its time, or the person who asked left
"""

from __future__ import annotations

__all__ = [
    "SidespinError",
    "ConfigError",
    "ToolError",
    "MalformedToolCall",
    "ToolNotFound",
    "ToolSwitchedOff",
    "ToolNotOffered",
    "BadArguments",
    "ToolFailed",
    "ToolTimeout",
    "BackendError",
    "MCPServerError",
    "AttachmentRefused",
    "QuestionError",
    "BadAnswer",
    "NoSuchQuestion",
    "QuestionClosed",
    "TranscriptError",
    "NotSaved",
    "SearchStopped",
]


class SidespinError(Exception):
    """Base of every error sidespin reports to a person."""


class ConfigError(SidespinError):
    """A configuration file or variable is wrong; the message names which."""


class ToolError(SidespinError):
    """Something went wrong with a tool call."""


class MalformedToolCall(ToolError):
    """The model's tool call could not be parsed; `reason` says why."""

    def __init__(self, reason: str, raw: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.raw = raw


class ToolNotFound(ToolError):
    def __init__(self, name: str, known: list[str] | None = None) -> None:
        hint = f" (known tools: {', '.join(sorted(known))})" if known else ""
        super().__init__(f"no tool named {name!r}{hint}")
        self.name = name


class ToolSwitchedOff(ToolError):
    """A person switched the tool off for this conversation (the servers panel)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the tool {name!r} is switched off for this conversation; "
                         "a person can switch it on in the Servers panel")
        self.name = name


class ToolNotOffered(ToolError):
    """A tool the model is not offered (the demo plugins held back), or no tool offered at all: `why` says
    what and how to change it."""

    def __init__(self, name: str | None, why: str) -> None:
        what = f"the tool {name!r} is not offered to the model" if name else "no tool is offered to the model"
        super().__init__(f"{what}: {why}")
        self.name = name


class BadArguments(ToolError):
    """Arguments that do not fit the tool's JSON schema."""


class ToolFailed(ToolError):
    """The tool ran and failed."""


class ToolTimeout(ToolError):
    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(f"tool {name!r} did not answer within {seconds:g} s")
        self.name = name
        self.seconds = seconds


class BackendError(SidespinError):
    """The language model backend failed."""


class MCPServerError(SidespinError):
    """An MCP server could not start, died, or answered badly."""


class AttachmentRefused(SidespinError):
    """A resource attached to a message cannot go with it; the message names it, and nothing is sent."""


class QuestionError(SidespinError):
    """An answer to a server's question (MCP elicitation) that cannot be taken."""


class BadAnswer(QuestionError):
    """An answer that does not fit the requested schema; `problems` says what, field by field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class NoSuchQuestion(QuestionError):
    """No question with that id was ever asked here."""


class QuestionClosed(QuestionError):
    """The question was answered already, or the call that asked it ended."""


class TranscriptError(SidespinError):
    """A transcript file could not be parsed; `line` is 1-based."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        where = f"{path or 'transcript'}" + (f", line {line}" if line else "")
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line


class NotSaved(SidespinError):
    """A conversation file could not be written (the disk is full, no permission): nothing of the write reached
    the file, which is as it was before it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: not saved ({reason}); the file is as it was — free some space, or fix the "
                         "folder's permissions, and try again")
        self.path = path
        self.reason = reason


class SearchStopped(SidespinError):
    """A search was stopped before it found its matches: its time ran out, or the person who asked left."""
