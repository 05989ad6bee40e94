"""llama.cpp's server (xllamacpp) in a child process, for `EmbeddedBackend`.

Why a child and not a thread: `xllamacpp.Server()` holds the GIL for the whole
model load (measured: a 10 ms ticker thread saw one 1.7 s gap), so in the parent
process it would freeze the event loop, worker thread or not.

Protocol: the parent writes one JSON line of settings on stdin; the child answers
one JSON line on stdout, `{"address": "http://127.0.0.1:PORT"}` or `{"error": "..."}`,
then serves until its stdin closes (the parent's `aclose()`, or the parent's death),
and exits at once: dropping the server would first wait for a prompt being evaluated
(seen: ten seconds and more for a long tool result), and nothing of it needs keeping.
Run by path with `python -P`, so it imports nothing of sidespin and its folder does not
shadow installed packages.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any


def server_params(model_path: str, n_ctx: int, threads: int, api_key: str, slot_dir: str = "") -> Any:
    """llama-server parameters: loopback only, a port the OS picks, quiet, `threads` threads, a required key;
    `slot_dir` is where a slot's evaluated prompt may be saved and restored (`/slots/0?action=save`)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model_path
    params.n_ctx = n_ctx
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # the OS picks a free port; `Server.listening_address` tells which
    params.use_jinja = True
    params.ui = False
    params.verbosity = -1  # llama.cpp's own log lines would flood the console
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = max(threads, os.cpu_count() or 1)  # prompt evaluation: every core
    if api_key:
        params.api_keys = [api_key]
    if slot_dir:
        params.slot_save_path = slot_dir
    return params


def _reply(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent too; it ends us by closing stdin
    settings = json.loads(sys.stdin.readline())
    try:
        import xllamacpp
    except ImportError as error:
        _reply({"error": f"xllamacpp is not installed ({error}): pip install xllamacpp"})
        return 1
    try:
        server = xllamacpp.Server(server_params(**settings))
    except RuntimeError as error:
        _reply({"error": f"{error} (is it a GGUF model file?)"})
        return 1
    _reply({"address": server.listening_address, "pid": os.getpid()})
    os.dup2(2, 1)  # nobody reads our stdout any more: later output goes to the console, never to a full pipe
    sys.stdin.read()  # serve until the parent closes the pipe
    os._exit(0)  # the OS frees the port and the memory; a slot file is written under another name until whole


if __name__ == "__main__":
    sys.exit(main())
