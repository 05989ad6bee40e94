"""`sidespin chat` with the scripted model in place of the configured one, for tests that drive the terminal:

    python -m tests.scripted_chat [--mcp-config FILE] chat [--transcript FILE]   (from the project's folder)

The arguments are the `sidespin` command's. The model has an empty script: a message sent gets its error.
"""

from __future__ import annotations

import sys

from sidespin.cli import build_parser
from sidespin.terminal import run_chat
from tests.scripted import ScriptedBackend

if __name__ == "__main__":
    sys.exit(run_chat(build_parser().parse_args(sys.argv[1:]), backend=ScriptedBackend([])))
