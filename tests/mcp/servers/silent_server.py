"""A stdio "server" that reads every request and never answers: the manager must give up on it in time."""

import sys

print("silent server: listening and never answering", file=sys.stderr, flush=True)
for _line in sys.stdin:
    pass
