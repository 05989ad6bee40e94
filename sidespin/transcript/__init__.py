"""Conversations as markdown files: the transcript is the state.

One file per conversation. Lines that start with a marker open a part of it
(Parley's format, from the seed `002`):

    💬: the user's text (it may go on over the following lines)

    🤖:[model name]

    🧠: a thought (a paragraph: it ends at a blank line or at a marker line)

    The answer, free text, kept byte for byte.

    ❓: `{"id":"call_1","type":"function","function":{"name":"web_search","arguments":"{\\"query\\":\\"x\\"}"}}`
    ❓:[yA] `{...}`                      the same proposal once a person chose (ya, yA, yo, yO or n)
    🛠️: [web_search][call_1]            the result of call_1, right after its proposal;
                                         `[error]` after the id marks a failed call
    <blank line>
    `the result on one line`             or, when it holds a newline, a backtick or a CR,
                                         a fenced block whose fence (3 or more backticks)
                                         is longer than any run of backticks inside it

    The model's continuation after the results, in the same 🤖: block.

    📝: a summary of the exchange (a paragraph, like a thought)

    💬:                                  an empty user turn: the answer is complete

    <!-- sidespin: {"model": "llama3"} --> before the first 💬: the conversation's notes
                                         (`Transcript.meta`): its title, the model it plays with,
                                         its versions {"versions": {"1": [ids]}} and where it came
                                         from {"forked_from": …} or {"imported": {"name", "turns"}}
                                         (see `sidespin.versions`): the first `turns` came with an
                                         imported file, so their yA/yO and results are not this machine's

    <!-- sidespin: {"started": "call_1"} -->   a note: what the page must show that Parley's
                                         markers have no place for; its own line inside a
                                         🤖: block, JSON in an HTML comment (Parley and any
                                         Markdown viewer skip it), never sent to the model

The notes, so that a reloaded page draws exactly what was seen live (`sidespin.record`):

    {"attached": [{server, uri, name}], "attachments": [images]}
                                         on its own line under a 💬: user message (the only note
                                         there): the resources attached with `@`, whose text is
                                         in the message (`sidespin.mcp.attach`); the images go
                                         to a model with vision with that message
    {"poke": {"tool": name, "arguments": {...}}}
                                         the same note, under a Poke's prompt: the tool it asks
                                         for (`sidespin.protocol.poked`; a Poke written before
                                         this note is known by its prompt)
    {"started": id}                      the call began to run (removed once its result is in)
    {"result": id, "seconds": 0.52, "kind": "timeout", "attachments": [...]}
                                         right after a 🛠️: block: its duration, its error's
                                         kind, the images (or other attachments) it returned;
                                         `"reused": true`: the result recorded in the version of
                                         the turn an edit replaced, given again, not run again;
                                         `"structured": {...}`: an MCP server's structuredContent
    {"interrupted": id}                  sidespin stopped while the call ran
    {"malformed": raw, "reason": why}    a tool call the model wrote and we could not read
    {"notice": message}                  a notice the person saw (a stop, a limit, an error)
    {"round": true}                      before a proposal the model made after the results above
                                         it, in a later round of the same turn
    {"stopped": true}                    the answer was stopped before it was complete
    {"usage": {"input": 812, "output": 64, "context": 876, "window": 8192, "counted": true}}
                                         the tokens the answer cost, every round added up
                                         (one note per 🤖: block, kept at its end); `context`:
                                         tokens the last round filled of the model's `window`;
                                         `counted`: by the model's tokenizer, not reported

In a 🛠️: header, `%`, `[`, `]`, CR and LF of a tool name or call id are written
%-escaped (`%25 %5B %5D %0D %0A`), so a call id of any characters round-trips.
`🛠️` is U+1F6E0 U+FE0F, exactly as in the seed. Everything that is not one of
these structures (blank lines, free text, text before the first 💬:) is kept
as written, so `parse(text).render() == text` for every text that parses.
When sidespin writes model or user text, a line that would begin with a
structural marker (💬 🤖 ❓ 🛠, and in thoughts 🧠 📝 too) or a note gets one
leading space, so what a model writes can never break the file or forge a note.

`to_messages` rebuilds the OpenAI-shaped messages without running a tool:
per 🤖: block, the text before a run of proposals and the proposals
themselves become ONE assistant message with `tool_calls` (as the seed's
example: both calls were proposed in the same answer), then one `tool`
message per proposal in proposal order (its result, a refusal for `[n]`, or for a
call that started and never finished, a result saying it was interrupted);
text after the results, or a `{"round": true}` note, starts a new assistant message. Thoughts and notes are not
sent.
"""

from sidespin.transcript.markers import (
    ASSISTANT,
    CONDENSED,
    DECISIONS,
    INTERRUPTED,
    NOT_RUN,
    NOTE_PREFIX,
    PROPOSAL,
    REFUSED,
    RESULT,
    SUMMARY,
    THOUGHT,
    USER,
)
from sidespin.transcript.model import Transcript
from sidespin.transcript.parse import parse
from sidespin.transcript.recorder import TranscriptRecorder
from sidespin.transcript.segments import Note, Proposal, Result, Segment, Summary, Text, Thought
from sidespin.transcript.store import Loaded, TranscriptStore
from sidespin.transcript.turn import Turn

__all__ = [
    "USER", "ASSISTANT", "THOUGHT", "SUMMARY", "PROPOSAL", "RESULT", "DECISIONS", "REFUSED", "NOT_RUN",
    "INTERRUPTED", "NOTE_PREFIX", "CONDENSED", "Text", "Thought", "Summary", "Proposal", "Result", "Note",
    "Segment", "Turn", "Transcript", "parse", "TranscriptStore", "Loaded", "TranscriptRecorder",
]
