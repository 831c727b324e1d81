"""Features of a task for diversity-aware selection: a text embedding of `nl` and of the reference, and
its operator signature as a vector; combined into one similarity in [0, 1].
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from kernelmosaic.curate.embed import Embedder
from kernelmosaic.curate.opsig import operator_signature
from kernelmosaic.tasks.schema import Task

__all__ = ["FeatureConfig", "TaskFeatures", "build_features", "embed_cached", "op_vectors"]

log = logging.getLogger(__name__)


class FeatureConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    embedding_weight: float = Field(0.6, ge=0, le=1)
    """Share of the text-embedding cosine in the similarity; the operator signature's cosine gets the rest."""
    cache_dir: Path | None = None
    """Folder for an embedding cache keyed by model and text hash; None computes every embedding afresh."""


@dataclass(frozen=True)
class TaskFeatures:
    """Row i of each matrix belongs to `ids[i]`; rows are unit length (or zero when a task has no operator)."""

    ids: list[str]
    text: np.ndarray
    """Concatenated nl and reference embeddings, scaled so a dot product is the mean of the two cosines."""
    ops: np.ndarray
    """Operator unigrams and bigrams, log-count times idf."""
    signatures: list[list[str]]
    embedding_weight: float

    def similarity(self) -> np.ndarray:
        """Pairwise similarity in [0, 1], symmetric, 1 on the diagonal."""
        text = np.clip(self.text @ self.text.T, 0.0, 1.0)
        ops = np.clip(self.ops @ self.ops.T, 0.0, 1.0)
        sim = self.embedding_weight * text + (1 - self.embedding_weight) * ops
        np.fill_diagonal(sim, 1.0)
        return sim


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed_cached(embedder: Embedder, texts: list[str], cache_dir: Path | None) -> np.ndarray:
    """`embedder.embed(texts)`, reading and extending an on-disk cache when `cache_dir` is given."""
    if cache_dir is None:
        return embedder.embed(texts)
    path = Path(cache_dir) / f"minilm-{embedder.sha256[:16]}.npz"
    cached: dict[str, np.ndarray] = {}
    if path.is_file():
        try:
            with np.load(path) as data:
                cached = {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            log.warning("%s: unreadable embedding cache, recomputing (%s)", path, exc)
    missing = sorted({_key(t): t for t in texts if _key(t) not in cached}.items())
    if missing:
        for (key, _), row in zip(missing, embedder.embed([t for _, t in missing]), strict=True):
            cached[key] = row
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, **cached)
        os.replace(tmp, path)
    return np.stack([cached[_key(t)] for t in texts]) if texts else embedder.embed([])


def op_vectors(signatures: list[list[str]]) -> np.ndarray:
    """Unit rows of log(1 + count) * idf over operator unigrams and in-order bigrams."""
    bags = [Counter(sig) + Counter(f"{a}>{b}" for a, b in zip(sig, sig[1:], strict=False)) for sig in signatures]
    vocab = sorted({term for bag in bags for term in bag})
    index = {term: i for i, term in enumerate(vocab)}
    df = Counter(term for bag in bags for term in bag)
    idf = np.array([np.log((1 + len(bags)) / (1 + df[t])) + 1.0 for t in vocab])
    matrix = np.zeros((len(bags), len(vocab)))
    for row, bag in enumerate(bags):
        for term, count in bag.items():
            matrix[row, index[term]] = np.log1p(count) * idf[index[term]]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def build_features(tasks: list[Task], embedder: Embedder, config: FeatureConfig | None = None,
                   progress: Callable[[str], None] | None = None) -> TaskFeatures:
    config = config or FeatureConfig()
    if progress:
        progress("embedding descriptions and references")
    texts = [t.forms.nl for t in tasks] + [t.forms.reference for t in tasks]
    vectors = embed_cached(embedder, texts, config.cache_dir)
    n = len(tasks)
    text = np.concatenate([vectors[:n], vectors[n:]], axis=1) / np.sqrt(2.0)
    if progress:
        progress("reading operator signatures")
    signatures = [operator_signature(t.forms.reference) for t in tasks]
    return TaskFeatures(ids=[t.id for t in tasks], text=text, ops=op_vectors(signatures), signatures=signatures,
                        embedding_weight=config.embedding_weight)
