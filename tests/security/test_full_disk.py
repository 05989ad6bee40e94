"""4 (round three). A full data disk loses nothing silently: a message sent to an existing conversation answered 200
and was gone (not in the file, not on the page, no error), and a rename answered a bare 500. Now a write that fails
says so where the person is (the send is refused with the reason, so the composer keeps the text; `sidespin ask`
prints it), the file is left as it was (never half-written), and the server keeps serving.

The disk is really full: the data folder is a small tmpfs filled to its last byte (`SmallDisk`; where this process
may not mount one, every fsync in the folder fails with ENOSPC instead)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest

from sidespin import cli
from tests.conftest import in_process
from tests.scripted import ScriptedBackend
from tests.security.conftest import SmallDisk, app_request, json_of

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
KEPT = "a message worth keeping"


def new_conversation(client) -> str:
    _, headers, _ = app_request(client, "POST", "/new", b"", FORM)
    return headers["location"].rsplit("/", 1)[1]


def send(client, cid: str, text: str) -> tuple[int, bytes]:
    """Send `text` as the page does; once it is taken, wait (on the turn's task, with a deadline) for its answer."""
    status, _, body = app_request(client, "POST", "/send", urlencode({"cid": cid, "msg": text}).encode(), FORM)
    if status == 200:
        turn = client.app.state.board.get(re.search(rb"/stream\?tid=(t[0-9a-f]+)", body)[1].decode())
        client.portal.call(turn.wait, 60)
    return status, body


def test_a_message_sent_on_a_full_disk_is_refused_with_the_reason_and_the_file_is_untouched(echo_model, data_dir,
                                                                                            small_disk):
    with in_process(echo_model, data_dir) as client:
        cid = new_conversation(client)
        assert send(client, cid, "first message")[0] == 200
        conversations = data_dir / "conversations"
        path = conversations / f"{cid}.md"
        before = path.read_bytes()
        assert b"first message" in before and b"You said" in before

        small_disk.fill()
        status, body = send(client, cid, KEPT)
        assert status == 507, body
        error = json_of(body)["error"]
        assert "your message was not sent" in error and "No space left on device" in error
        assert path.read_bytes() == before  # as it was: not changed, not half-written
        assert [p.name for p in conversations.iterdir() if p.name.startswith(".")] == []  # no temporary file left
        status, _, page = app_request(client, "GET", f"/c/{cid}")
        assert status == 200 and KEPT.encode() not in page  # nothing shown that was not kept
        assert app_request(client, "GET", "/health")[0] == 200  # the server keeps serving

        small_disk.free()  # room again: the same message goes through
        assert send(client, cid, KEPT)[0] == 200
        assert KEPT.encode() in path.read_bytes()


def test_a_rename_on_a_full_disk_says_why_and_keeps_the_title(echo_model, data_dir, small_disk):
    with in_process(echo_model, data_dir) as client:
        cid = new_conversation(client)
        assert send(client, cid, "first message")[0] == 200
        path = data_dir / "conversations" / f"{cid}.md"
        before = path.read_bytes()
        small_disk.fill()
        status, _, body = app_request(client, "POST", "/rename", urlencode({"cid": cid, "title": "Groceries"}).encode(),
                                      FORM)
        assert status == 507 and "not saved (No space left on device)" in json_of(body)["error"]
        assert path.read_bytes() == before
        status, _, body = app_request(client, "POST", "/new", b"", FORM)  # what needs no room still works
        assert status in (303, 507)
        assert app_request(client, "GET", "/health")[0] == 200


def test_the_terminal_says_the_message_was_not_saved(tmp_path: Path, monkeypatch, capsys):
    data = tmp_path / "data"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"data_dir": str(data), "mcp_config": str(tmp_path / "none.json")}))
    model = ScriptedBackend([["Noted."]])
    monkeypatch.setattr(cli, "_backend_for", lambda args, settings: model)
    with SmallDisk(data) as disk:
        (data / "conversations").mkdir()
        disk.fill()
        args = cli.build_parser().parse_args(["--config", str(config), "ask", KEPT, "--json"])
        assert args.func(args) == 0
        answer = json.loads(capsys.readouterr().out)
    assert any("your message was not saved" in notice and "No space left on device" in notice
               for notice in answer["notices"])
    assert model.calls == []  # nothing was sent to the model


@pytest.mark.parametrize("where", ["/send", "/rename"])
def test_the_refusal_is_never_a_bare_500(echo_model, data_dir, small_disk, where):
    with in_process(echo_model, data_dir) as client:
        cid = new_conversation(client)
        small_disk.fill()
        fields = {"cid": cid, "msg": KEPT} if where == "/send" else {"cid": cid, "title": "x"}
        status, _, body = app_request(client, "POST", where, urlencode(fields).encode(), FORM)
        assert status == 507 and "internal error" not in json_of(body)["error"]
