"""sidespin's web server, as `./run` starts it: the settings read, the app built, uvicorn serving it.

Run with `./run` (or `python server.py`; `sidespin serve` does the same). The app itself is built by
`sidespin.web.app.create_app`; its pages and routes live in `sidespin/web/`. A bad setting stops it at once,
with the reason (exit status 2).
"""

from __future__ import annotations

import sys

from sidespin.config import load_settings
from sidespin.errors import ConfigError
from sidespin.web.app import create_app
from sidespin.web.serve import serve


def main() -> int:
    try:
        settings = load_settings()
    except ConfigError as error:  # the top edge: a message a person can act on
        print(f"sidespin: cannot start: {error}", file=sys.stderr)
        return 2
    serve(create_app(settings), settings.host, settings.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
