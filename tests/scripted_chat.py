"""`sidespin chat` with the scripted model in place of the configured one, for tests that drive the terminal:

    python -m tests.scripted_chat [--mcp-config FILE] chat [--transcript FILE]   (from the project's folder)

The arguments are the `sidespin` command's. The model has an empty script (a message sent gets its error), or the
turns `SIDESPIN_TEST_SCRIPT=module:name` names (a list of `tests.scripted` turns in a test module), its tool calls
made natively.
"""

from __future__ import annotations

import importlib
import os
import sys

from sidespin.cli import build_parser
from sidespin.terminal import run_chat
from tests.scripted import ScriptedBackend


def scripted_model() -> ScriptedBackend:
    named = os.environ.get("SIDESPIN_TEST_SCRIPT", "")
    if not named:
        return ScriptedBackend([])
    module, _, name = named.partition(":")
    return ScriptedBackend(list(getattr(importlib.import_module(module), name)), supports_tools=True)


if __name__ == "__main__":
    sys.exit(run_chat(build_parser().parse_args(sys.argv[1:]), backend=scripted_model()))
