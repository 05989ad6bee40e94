"""`sidespin chat`: the terminal chat at the `prompt -> ` prompt (the mcp-chat seed).

One job a module: `session` (start, then the loop of lines and turns), `chat` (the events
drawn, a server's question and an approval asked), `line` (a typed line's `@URI` and
`/prompt` as the message to send), `keyboard` (the lines read in a thread), `sign_in`
(OAuth sign-ins and their loopback listener).
"""

from sidespin.terminal.line import Line, read_line
from sidespin.terminal.session import PROMPT, run_chat

__all__ = ["PROMPT", "Line", "read_line", "run_chat"]
