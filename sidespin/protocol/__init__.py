"""The micro-MCP protocol: how any model asks for a tool in plain text.

A salted one-shot prompt teaches the block below; `parse_request` reads a block
back into a `ToolCall`, tolerating what small models really write (unescaped
`&` and `<` in values, single quotes, missing `/`, JSON in `<params>`);
`grammar_for` builds a llama.cpp GBNF grammar that only admits well-formed
blocks naming registered tools.

    <mcp-request>
      <tool name="say_hello" />
      <param name="name">World</param>
    </mcp-request>

One job per module:

- `prompt`: the salted teaching prompt and the Poke prompt (`teaching_prompt`,
  `poke_prompt`), and which tool a Poke asks for (`poke_note`, `poked`);
- `block`: the block itself, written (`format_block`) and read back into a
  `ToolCall` (`parse_request`), its tag name `MCP_TAG`, and whether arguments carry call syntax
  (`holds_call_syntax`);
- `grammar`: the GBNF grammar of the blocks a set of tools admits (`grammar_for`);
- `history`: a conversation's past calls and results in block form (`xml_history`).
"""

from sidespin.protocol.block import MCP_TAG, format_block, holds_call_syntax, parse_request
from sidespin.protocol.grammar import grammar_for
from sidespin.protocol.history import alternating, xml_history
from sidespin.protocol.prompt import poke_note, poke_prompt, poke_target, poked, teaching_prompt

__all__ = [
    "MCP_TAG",
    "alternating",
    "xml_history",
    "teaching_prompt",
    "poke_prompt",
    "format_block",
    "parse_request",
    "holds_call_syntax",
    "poke_target",
    "poke_note",
    "poked",
    "grammar_for",
]
