"""5. Bodies: a size limit on every endpoint (413 with a reason); every malformed body a 4xx in JSON, never a 500."""

from __future__ import annotations

import json

import pytest

from starlette.testclient import TestClient

from tests.conftest import in_process, serve_app
from tests.security.conftest import app_request, json_of, raw_request

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
JSON = {"Content-Type": "application/json"}
POSTS = ["/send", "/poke", "/approve", "/stop", "/rerun", "/new", "/mcp-tool-executor", "/mcp"]


def new_conversation(client: TestClient) -> str:
    _, headers, _ = app_request(client, "POST", "/new", b"", FORM)
    return headers["location"].rsplit("/", 1)[1]


def multipart(fields: dict[str, str], files: dict[str, bytes]) -> tuple[bytes, dict[str, str]]:
    boundary = "sidespinboundary"
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n' for k, v in fields.items()]
    parts += [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"; filename="x.txt"\r\n'
              f"Content-Type: text/plain\r\n\r\n{v.decode()}\r\n" for k, v in files.items()]
    body = ("".join(parts) + f"--{boundary}--\r\n").encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def test_a_body_over_the_limit_is_a_413_with_a_reason_on_every_endpoint(echo_model, data_dir):
    with in_process(echo_model, data_dir, max_body_bytes=64 * 1024) as client:
        big = b"msg=" + b"x" * (100 * 1024)
        for path in POSTS:
            status, _, body = app_request(client, "POST", path, big, FORM)
            assert status == 413, path
            assert "64" in json_of(body)["error"] or "65536" in json_of(body)["error"]


def test_a_chunked_body_without_a_length_is_cut_at_the_limit(echo_model, data_dir):
    # how a chunked body is framed is the HTTP server's business: this one keeps a real server
    with serve_app(echo_model, data_dir, max_body_bytes=64 * 1024) as base:
        payload = b"x" * (200 * 1024)
        chunked = f"{len(payload):x}\r\n".encode() + payload + b"\r\n0\r\n\r\n"
        status, _, body = raw_request(base, "POST", "/mcp-tool-executor", chunked,
                                      {**JSON, "Transfer-Encoding": "chunked"})
        assert status == 413 and "max_body_bytes" in json_of(body)["error"]
        assert raw_request(base, "GET", "/health")[0] == 200


def test_a_message_longer_than_the_limit_is_refused_and_nothing_is_written(echo_model, data_dir):
    with in_process(echo_model, data_dir, max_message_chars=1000) as client:
        cid = new_conversation(client)
        status, _, body = app_request(client, "POST", "/send", f"cid={cid}&msg={'y' * 1500}".encode(), FORM)
        assert status == 413 and "max_message_chars" in json_of(body)["error"]
        assert (data_dir / "conversations" / f"{cid}.md").read_text() == ""


@pytest.mark.parametrize("body", [
    b"[" * 100_000, b'{"tool": ' * 50_000, b"\xff\xfe not utf-8", b"{", b"null", b"[]", b'"say_hello"',
    b'{"tool": 42}', b'{"tool": "say_hello", "params": [1, 2]}', b'{"tool": "say_hello", "params": "name=x"}',
    b'{"tool": "say_hello", "params": {"name": "x", "extra": 1}}', b'{"tool": "roll_dice", "params": {"sides": "many"}}',
])
def test_malformed_json_to_the_executor_is_a_4xx_with_a_reason(echo_model, data_dir, body):
    with in_process(echo_model, data_dir) as client:
        status, headers, answer = app_request(client, "POST", "/mcp-tool-executor", body, JSON)
        assert 400 <= status < 500 and headers["content-type"].startswith("application/json")
        assert json_of(answer)["status"] == "error" and json_of(answer)["error"]
        assert app_request(client, "GET", "/health")[0] == 200


def test_form_fields_sent_as_files_or_wrong_kinds_are_4xx_never_500(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        cid = new_conversation(client)
        cases = [
            ("/send", *multipart({"cid": cid}, {"msg": b"hello"})),
            ("/send", *multipart({"msg": "hello"}, {"cid": cid.encode()})),
            ("/poke", *multipart({"cid": cid}, {"tool": b"say_hello"})),
            ("/approve", *multipart({"cid": cid, "call_id": "c"}, {"choice": b"yA"})),
            ("/stop", *multipart({}, {"cid": cid.encode()})),
            ("/poke", f"cid={cid}&arguments=[1,2]".encode(), FORM),
            ("/poke", f"cid={cid}&arguments=\"text\"".encode(), FORM),
            ("/poke", f"cid={cid}&arguments={'[' * 50_000}".encode(), FORM),
            ("/poke", f"cid={cid}&arguments={{bad".encode(), FORM),
            ("/send", b"cid=../../etc&msg=hi", FORM),
            ("/send", f"cid={cid}&msg=".encode(), FORM),
            ("/send", b"%zz=%zz", FORM),
            ("/approve", f"cid={cid}&call_id=nope&choice=yA".encode(), FORM),
            ("/rerun", f"cid={cid}&call_id=nope".encode(), FORM),
            ("/send", b"\x00\x01\x02", FORM),
            ("/send", b"--x\r\nbroken multipart", {"Content-Type": "multipart/form-data; boundary=x"}),
        ]
        for path, body, headers in cases:
            status, answer_headers, answer = app_request(client, "POST", path, body, headers)
            assert 400 <= status < 500, (path, body[:60], status, answer[:200])
            assert json_of(answer)["status"] == "error", (path, answer[:200])
        assert app_request(client, "GET", "/health")[0] == 200


def test_the_mcp_endpoint_answers_bad_json_rpc_with_an_error_not_a_crash(echo_model, data_dir):
    with in_process(echo_model, data_dir) as client:
        headers = {**JSON, "Accept": "application/json, text/event-stream"}
        for body in [b"[" * 100_000, b"{", json.dumps({"jsonrpc": "2.0", "id": 1, "method": 5}).encode()]:
            status, _, _ = app_request(client, "POST", "/mcp", body, headers)
            assert status < 500, body[:40]
        assert app_request(client, "GET", "/health")[0] == 200
