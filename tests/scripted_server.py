"""`python server.py` with the scripted model in place of the configured one, for tests that start it as a
person does (a process of its own, its settings from the environment, its output read):

    python -m tests.scripted_server        (from the project's folder)

The model has an empty script: these tests look at the server, not at answers.
"""

from __future__ import annotations

from sidespin.config import load_settings
from sidespin.web.app import create_app
from sidespin.web.serve import serve
from tests.scripted import ScriptedBackend


def main() -> None:
    settings = load_settings()
    serve(create_app(settings, backend=ScriptedBackend([])), settings.host, settings.port)


if __name__ == "__main__":
    main()
