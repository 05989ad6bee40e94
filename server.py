"""sidespin's web server, as `./run` starts it: the settings read, the app built, uvicorn serving it.

Run with `./run` (or `python server.py`; `sidespin serve` does the same). The app itself is built by
`sidespin.web.app.create_app`; its pages and routes live in `sidespin/web/`.
"""

from __future__ import annotations

from sidespin.config import load_settings
from sidespin.web.app import create_app
from sidespin.web.serve import serve


def main() -> None:
    settings = load_settings()
    serve(create_app(settings), settings.host, settings.port)


if __name__ == "__main__":
    main()
