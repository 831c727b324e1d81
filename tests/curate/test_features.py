"""Operator signatures from the AST, the pinned embedding model, and the combined similarity."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmosaic.curate.embed import Embedder, EmbeddingError
from kernelmosaic.curate.features import FeatureConfig, build_features, embed_cached, op_vectors
from kernelmosaic.curate.opsig import operator_signature

from .conftest import task

NETWORK = '''
import torch
import torch.nn as nn
from torch.nn import functional as fn


class Model(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.stem = nn.Conv2d(3, width, 3)
        layers = []
        for _ in range(depth):
            layers += [nn.Linear(width, width), nn.ReLU()]
        layers.append(nn.Dropout(0.0))
        self.body = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 10))

    def _pool(self, x):
        return x.mean(dim=(2, 3))

    def forward(self, x):
        h = fn.gelu(self.stem(x))
        h = self.body(self._pool(h)) + 1.0
        return torch.softmax(self.head(h) @ h.T, dim=-1)
'''


def test_operator_signature_follows_evaluation_order():
    assert operator_signature(NETWORK) == ["conv2d", "gelu", "mean", "linear", "relu", "dropout", "add",
                                           "layernorm", "linear", "t", "matmul", "softmax"]


def test_operator_signature_of_unparsable_or_modelless_source_is_empty():
    assert operator_signature("def broken(:") == []
    assert operator_signature("import torch\nx = torch.relu(torch.ones(3))\n") == []


def test_op_vectors_are_unit_rows_and_order_aware():
    vectors = op_vectors([["matmul", "relu"], ["relu", "matmul"], ["matmul", "relu"], []])
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0)
    assert np.allclose(vectors[3], 0.0)
    assert vectors[0] @ vectors[2] == pytest.approx(1.0)
    assert vectors[0] @ vectors[1] < 0.99  # same operators, other order: bigrams differ


def test_weights_with_another_hash_are_refused(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    with pytest.raises(EmbeddingError, match="model.safetensors: sha256 .* is not the pinned"):
        Embedder(model_dir=tmp_path)
    with pytest.raises(EmbeddingError, match="missing"):
        Embedder(model_dir=tmp_path / "empty")


def test_embeddings_place_paraphrases_closer_than_unrelated_text(embedder):
    vectors = embedder.embed(["apply ReLU to every element of a matrix",
                              "rectified linear unit, elementwise, on a 2D tensor",
                              "3D transposed convolution with stride 2 over a video volume"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1
    again = embedder.embed(["apply ReLU to every element of a matrix"])
    assert np.allclose(again[0], vectors[0], atol=1e-5)  # deterministic, independent of the batch


def test_embedding_cache_is_reused(embedder, tmp_path):
    texts = ["sum each row", "softmax over the last dimension"]
    first = embed_cached(embedder, texts, tmp_path)
    cache = next(tmp_path.glob("minilm-*.npz"))

    class Refusing:
        sha256 = embedder.sha256

        def embed(self, _texts):
            raise AssertionError("the cache should have answered")

    assert np.allclose(embed_cached(Refusing(), texts[::-1], tmp_path), first[::-1])
    assert cache.stat().st_size > 0


def test_similarity_combines_text_and_operators(embedder):
    tasks = [task("relu", "torch.relu({x})"), task("relu_f", "F.relu({x})", nl="ReLU of x, elementwise."),
             task("row_sum", "{x}.sum(dim=1)", category="reduction")]
    features = build_features(tasks, embedder, FeatureConfig(embedding_weight=0.5))
    sim = features.similarity()
    assert features.signatures == [["relu"], ["relu"], ["sum"]]
    assert np.allclose(sim, sim.T) and np.allclose(np.diag(sim), 1.0)
    assert ((sim >= 0) & (sim <= 1)).all()
    assert sim[0, 1] > sim[0, 2]
