"""A stdio "MCP server" that cannot start: it says why on stderr and exits 1 (the panel shows that line).

With the file named by `SIDESPIN_TEST_FIXED` present it serves the tools-only server instead,
so a test can "fix" it and press Restart.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

fixed = os.environ.get("SIDESPIN_TEST_FIXED")
if fixed and Path(fixed).exists():
    sys.path.insert(0, str(Path(__file__).parent))
    import anyio
    from tools_only_server import main

    anyio.run(main)
else:
    print("failing_server: cannot open /nonexistent/db.sqlite (error 7)", file=sys.stderr, flush=True)
    sys.exit(1)
