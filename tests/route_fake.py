"""A fake of llama.cpp's own endpoints for the route: a tiny Hermes-style template and scripted decisions.

`FakeLlama(routes)` maps a user message to the calls the model "wants" (name, arguments):
a message in `routes` opens its answer with a call (probability `p_call`), any other with
text; after each call the model goes on to the next scripted one, then stops. With `writes=N`
it stops after N calls of its own accord, but writes the next scripted one when the answer is
continued with the separator (a small model that writes one call where two were asked); past
the scripted calls it writes the last one again. Once results
have come back for the message, it wants what `after` says for it (nothing by default). Everything it
was asked is kept in `asked` (kind, prompt, grammar or schema). Asked plainly whether a tool does what the
message asks, it says yes, and no for the tools in `misfits`. Where a name is being written, its likeliest next
tokens are what `name_tokens` says for the part written (none where it says nothing), or, without `name_tokens`,
the rest of the scripted name (0.9), and of the other names it wants (0.1 in all). Under the names grammar it writes the scripted name, or the first the
grammar allows. With `shy=P` its chance of opening a call is P
once the conversation holds an earlier answer in words (a small model goes on answering in words). Asked for one
more value after the arguments it wrote (a prompt ending `"name": `), it writes `later[name]`; asked to go on with a
string it wrote, it ends it.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
from typing import Any, AsyncIterator, Awaitable, Callable

from aiohttp import web

from sidespin.tools import Tool
from tests.conftest import serving

Handler = Callable[[web.Request], Awaitable[web.Response]]
OPEN, BETWEEN, CLOSE = '<tool_call>\n{"name": "', '", "arguments": ', "}\n</tool_call>"


class FakeLlama:
    def __init__(self, routes: dict[str, list[tuple[str, dict[str, Any]]]] | None = None, *, p_call: float = 0.9,
                 native: bool = True, after: dict[str, list[tuple[str, dict[str, Any]]]] | None = None,
                 writes: int | None = None, loops_past: int | None = None, shy: float | None = None,
                 misfits: frozenset[str] = frozenset(),
                 name_tokens: dict[str, list[tuple[str, float]]] | None = None,
                 later: dict[str, Any] | None = None) -> None:
        self.shy = shy
        self.later = later or {}  # the value it writes for a parameter when asked for it after closing its arguments
        self.name_tokens = name_tokens  # the next tokens where a name is being written, by the part written
        self.misfits = misfits  # tools the model says do not do what the message asks, asked plainly
        self.routes = routes or {}
        self.loops_past = loops_past  # arguments under strings longer than this are cut off (a model that loops)
        self.writes = writes
        self.after = after or {}
        self.p_call = p_call
        self.native = native  # False: a template that ignores `tools`
        self.asked: list[dict[str, Any]] = []

    async def render(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
        self.asked.append({"kind": "render", "messages": messages, "tools": tools})
        head = ""
        if tools and self.native:
            head = "<tools>" + "\n".join(json.dumps(t) for t in tools) + "</tools>"
        body = "".join(self._message(m) for m in messages)
        return f"{head}{body}<assistant>"

    @staticmethod
    def _message(message: dict[str, Any]) -> str:
        calls = [
            f'{OPEN}{call["function"]["name"]}{BETWEEN}{call["function"]["arguments"]}{CLOSE}'
            for call in message.get("tool_calls") or []
        ]
        return f"<{message['role']}>{message.get('content') or ''}{chr(10).join(calls)}</{message['role']}>"

    def _wanted(self, prompt: str) -> tuple[list[tuple[str, dict[str, Any]]], int]:
        """The scripted calls of the prompt's last user message, and how many the answer already wrote."""
        head, _, answer = prompt.rpartition("<assistant>")
        users = re.findall(r"<user>(.*?)</user>", head, re.DOTALL)
        message = users[-1] if users else ""
        answered = "<tool>" in head[head.rfind("<user>"):]
        wanted = self.after.get(message, []) if answered else self.routes.get(message, [])
        return wanted, answer.count(CLOSE)

    async def next_tokens(self, prompt: str, n: int = 20) -> list[tuple[str, float]]:
        self.asked.append({"kind": "next_tokens", "prompt": prompt})
        fit = re.search(r"<user>Function: ([^:]+):[^<]*Does this function do what the user asks\?</user><assistant>$", prompt)
        if fit:
            return [("no", 0.8), ("yes", 0.2)] if fit.group(1) in self.misfits else [("yes", 0.9), ("no", 0.1)]
        wanted, written = self._wanted(prompt)
        answer = prompt.rpartition("<assistant>")[2]
        if OPEN in answer and not re.search(r'["<]', answer.rpartition(OPEN)[2]):  # a name is being written
            written_so_far = answer.rpartition(OPEN)[2]
            if self.name_tokens is not None:
                return self.name_tokens.get(written_so_far, [])
            names = list(dict.fromkeys(n for n, _ in wanted[min(written, len(wanted) - 1):] + wanted))
            return [(n[len(written_so_far):] + '",', 0.9 if i == 0 else 0.1 / len(names))
                    for i, n in enumerate(names) if n.startswith(written_so_far)]
        if written == 0:
            p = self.p_call if wanted else 1 - self.p_call
            if wanted and self.shy is not None and re.search(r"<assistant>[^<]+</assistant>", prompt):
                p = self.shy
            return sorted([("<tool_call>", p), ("Hello", 1 - p)], key=lambda pair: -pair[1])
        if written < min(len(wanted), self.writes or len(wanted)):  # the separator, a token at a time: a newline, then the next call's opening
            return [("<tool_call>", 0.9), ("</assistant>", 0.1)] if prompt.endswith("\n") else [("\n", 0.9)]
        return [("\n", 0.6), ("</assistant>", 0.4)] if not prompt.endswith("\n") else [("</assistant>", 0.9)]

    async def complete(self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None,
                       max_tokens: int) -> str:
        self.asked.append({"kind": "complete", "prompt": prompt, "grammar": grammar, "schema": json_schema,
                           "max_tokens": max_tokens})
        wanted, written = self._wanted(prompt)
        name, arguments = wanted[min(written, len(wanted) - 1)] if wanted else ("", {})
        if grammar is not None and grammar.startswith('root ::= [^"'):  # asked to go on with a string: it ends it
            return '"'
        if grammar is not None:  # a name the grammar does not allow: the first it does, as a small model writes
            allowed = [json.loads(part.strip()) for part in grammar.strip().removeprefix("root ::= ").split(" | ")]
            return name + BETWEEN if not name or name + BETWEEN in allowed else allowed[0]
        one_more = re.search(r'"(\w+)": $', prompt.rpartition(BETWEEN)[2])
        if one_more:  # one value asked for after the arguments written
            return json.dumps(self.later[one_more.group(1)])
        named = prompt.rpartition(OPEN)[2].removesuffix(BETWEEN)  # the arguments of the name written, if scripted
        if named != name:
            arguments = next((a for n, a in wanted if n == named), arguments)
        if isinstance((json_schema or {}).get("properties"), dict):  # a grammar writes no property its schema lacks
            arguments = {k: v for k, v in arguments.items() if k in json_schema["properties"]}
        longest = max((p.get("maxLength", 0) for p in (json_schema or {}).get("properties", {}).values()), default=0)
        if self.loops_past is not None and longest > self.loops_past:
            return json.dumps(arguments)[:-3]
        return json.dumps(arguments)

    def kinds(self) -> list[str]:
        return [a["kind"] for a in self.asked]


@contextlib.asynccontextmanager
async def serving_llama(fake: FakeLlama) -> AsyncIterator[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """`fake` behind llama.cpp's own HTTP endpoints on loopback; yields the URL and every request's body."""
    received: list[tuple[str, dict[str, Any]]] = []

    async def apply_template(request: web.Request) -> web.Response:
        body = await request.json()
        received.append(("/apply-template", body))
        return web.json_response({"prompt": await fake.render(body["messages"], body.get("tools"))})

    async def completion(request: web.Request) -> web.Response:
        body = await request.json()
        received.append(("/completion", body))
        probabilities: list[dict[str, Any]] = []
        if body.get("n_probs"):
            likely = await fake.next_tokens(body["prompt"], body["n_probs"])
            probabilities = [{"top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in likely]}]
            content = likely[0][0]
        else:
            content = await fake.complete(body["prompt"], body.get("grammar"), body.get("json_schema"),
                                          body["n_predict"])
        return web.json_response({"content": content, "completion_probabilities": probabilities,
                                  "tokens_evaluated": len(body["prompt"]), "tokens_predicted": len(content)})

    async with serving(llama_app(apply_template, completion)) as url:
        yield url, received


def llama_app(apply_template: Handler, completion: Handler) -> web.Application:
    """An app with llama.cpp's own two endpoints, answered by the given handlers."""
    app = web.Application()
    app.router.add_post("/apply-template", apply_template)
    app.router.add_post("/completion", completion)
    return app


class GoesOn(FakeLlama):
    """A model that, asked to go on with a path past the folder it wrote (`at`), writes `rest`."""

    def __init__(self, *args: Any, rest: str, at: str = "/home/me/files/", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rest, self.at = rest, at

    async def complete(self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None,
                       max_tokens: int) -> str:
        if prompt.endswith(self.at):
            self.asked.append({"kind": "complete", "prompt": prompt, "grammar": grammar, "schema": json_schema})
            return self.rest + '"'
        return await super().complete(prompt, grammar, json_schema, max_tokens)


def file_tools() -> tuple[Tool, Tool]:
    """`list_directory` and `read_file` of a file server working in /home/me/files."""
    source = {"source": "mcp:files", "places": ("/home/me/files",), "fn": lambda **_: None}
    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    return (Tool(name="list_directory", description="List a directory's files.", input_schema=path, **source),
            Tool(name="read_file", description="Read a file.", input_schema=path, **source))


def notes_listed(text: str, listing: str) -> list[dict[str, Any]]:
    """`text` asked, the notes folder listed for it, and `listing` come back."""
    call = {"id": "c1", "type": "function",
            "function": {"name": "list_directory", "arguments": '{"path": "/home/me/files/notes"}'}}
    return [{"role": "user", "content": text}, {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": listing}]



class WritesAnEdit(FakeLlama):
    """A model that, asked to write an edit again after a line of the file read (`sidespin.edits`), takes the line
    `line` when the grammar offers it (else the first line it offers) and writes `adds` after it. The lines the
    grammar offered are kept in `offered`."""

    def __init__(self, *args: Any, line: str, adds: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line, self.adds = line, adds
        self.offered: list[str] = []

    async def complete(self, prompt: str, grammar: str | None, json_schema: dict[str, Any] | None,
                       max_tokens: int) -> str:
        if grammar is None or " added " not in grammar:
            return await super().complete(prompt, grammar, json_schema, max_tokens)
        self.asked.append({"kind": "complete", "prompt": prompt, "grammar": grammar, "schema": json_schema})
        literals = [json.loads(text) for text in re.findall(r'"(?:[^"\\]|\\.)*"', grammar.splitlines()[0])]
        found = [(text, re.match(r'(?:\[\{"old\w*": )?"(.*?)", "new', text)) for text in literals]
        choices = [text for text, opening in found if opening]
        self.offered = [json.loads(f'"{opening.group(1)}"') for _, opening in found if opening]
        choice = choices[self.offered.index(self.line) if self.line in self.offered else 0]
        return choice + json.dumps(self.adds)[1:-1] + ('"}]' if choice.startswith("[") else '"')
