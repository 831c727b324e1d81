"""Compose operator chains into fused tasks with matching nl, reference and (where expressible) spec forms.

Deterministic: the same seed gives the same tasks, byte for byte.
"""

from __future__ import annotations

import hashlib
import random

from kernelmosaic.tasks.schema import Forms, Provenance, Review, Shapes, Task
from kernelmosaic.tasks.synth.ops import ELEMENTWISE, Build, Op
from kernelmosaic.tasks.synth.ops_struct import HEADS, NORMS, REDUCTIONS

__all__ = ["synthesize", "compose"]

# Default (GPU-sized) and small (CPU audit) values per size constant, drawn per task.
_SIZES = {
    "2d": {"batch_size": ([128, 256], [4, 8]), "in_features": ([1024, 2048], [32, 48]),
           "out_features": ([1024, 4096], [64, 96])},
    "4d": {"batch_size": ([16, 32], [2, 3]), "in_channels": ([16, 32], [3, 4]),
           "out_channels": ([32, 64], [8, 12]), "height": ([64, 128], [8, 10]), "width": ([64, 128], [8, 12])},
}
# Reducing a normalized row gives a near-constant (sum/mean of LayerNorm is 0, of softmax is 1): degenerate.
_SAFE_AFTER_NORM = {"max"}
# After a reduction values are large; saturating operators would make the output constant.
_SAFE_AFTER_REDUCE = {"scale", "gelu", "silu", "softplus", "elu", "square", "leaky_relu"}


def _pick_chain(rng: random.Random) -> tuple[str, list[Op]]:
    family = rng.choice(["2d", "2d", "4d"])
    head = rng.choice([h for h in HEADS if family in h.families])
    chain = rng.sample(ELEMENTWISE, rng.randint(1, 3))
    if rng.random() < 0.5:
        norm = rng.choice([n for n in NORMS if family in n.families])
        chain.insert(rng.randint(0, len(chain)), norm)
    if rng.random() < 0.45:
        normalized = any(op in NORMS for op in chain)
        options = [r for r in REDUCTIONS if not normalized or r.name in _SAFE_AFTER_NORM]
        spots = [i for i in range(1, len(chain) + 1) if all(op.name in _SAFE_AFTER_REDUCE for op in chain[i:])]
        if "softmax" not in [op.name for op in chain] and "clamp" not in [op.name for op in chain]:
            chain.insert(rng.choice(spots), rng.choice(options))
    if head.name in ("features", "image") and (not chain or chain[0].name in ("bias", "scale")) and len(chain) < 2:
        chain.append(rng.choice([op for op in ELEMENTWISE if op.name in ("gelu", "tanh", "silu")]))
    return family, [head] + chain


def compose(family: str, chain: list[Op], rng: random.Random, task_id: str, seed: int) -> Task:
    """Build one task from a head followed by operators."""
    b = Build(rng=rng, family=family)
    for op in chain:
        op.apply(b)
    sizes = {name: rng.choice(big) for name, (big, _) in _SIZES[family].items()}
    small = {name: rng.choice(tiny) for name, (_, tiny) in _SIZES[family].items()}
    used = [n for n in sizes if any(n in dims for _, dims, _ in b.inputs) or any(n == v for _, v in b.init_args)]
    title = " + ".join(op.title for op in chain if op.title)
    return Task(
        id=task_id, title=title, level=2, category="fused", tags=sorted(set(b.tags) | {"synthetic", "fused"}),
        forms=Forms(nl=_nl(b, sizes, used), reference=_reference(b, title, sizes, used),
                    spec=_spec(b, used)),
        shapes=Shapes(small={n: small[n] for n in used}),
        provenance=Provenance(source="kernelmosaic-synth", author="kernelmosaic", license="Apache-2.0",
                              synth_seed=seed),
        review=Review(state="draft"))


def _reference(b: Build, title: str, sizes: dict, used: list[str]) -> str:
    sig = "".join(f", {name}" for name, _ in b.init_args)
    lines = ["import torch", "import torch.nn as nn", ""] + [f"{n} = {sizes[n]}" for n in used] + ["", ""]
    lines += ["class Model(nn.Module):", f'    """{title}."""', "", f"    def __init__(self{sig}):",
              "        super().__init__()"] + [f"        {line}" for line in b.init]
    lines += ["", f"    def forward(self, {', '.join(name for name, _, _ in b.inputs)}):"]
    lines += [f"        {line}" for line in b.forward] + ["        return y", "", "", "def get_inputs():"]
    lines += [f"    {name} = {expr}" for name, _, expr in b.inputs]
    lines += [f"    return [{', '.join(name for name, _, _ in b.inputs)}]", "", "", "def get_init_inputs():"]
    values = [v if isinstance(v, str) else repr(v) for _, v in b.init_args]
    lines.append(f"    return [{', '.join(values)}]")
    return "\n".join(lines) + "\n"


def _spec(b: Build, used: list[str]) -> str:
    if b.spec is None:
        return ""
    out = f"output out[{', '.join(b.labels)}] = {b.idx()}" if b.labels else f"output out = {b.idx()}"
    return "\n".join(["# synthesized", f"dim {', '.join(used)}", *b.spec, out]) + "\n"


def _nl(b: Build, sizes: dict, used: list[str]) -> str:
    shapes = ", ".join(f"{n} = {sizes[n]}" for n in used)
    inputs = ", ".join(f"`{name}` of shape ({', '.join(dims)})" for name, dims, _ in b.inputs)
    steps = "; then ".join(b.phrases)
    out = f"({', '.join(_SHAPE_NAMES[lab] for lab in b.labels)})" if b.labels else "()"
    return (f"Fused operator chain on float32 inputs {inputs}, with {shapes}. In order, the model {steps}. "
            f"It returns one float32 tensor of shape {out}.")


_SHAPE_NAMES = {"b": "batch_size", "n": "out_features", "c": "out_channels", "h": "height", "w": "width"}


def synthesize(n: int, seed: int = 0, max_attempts: int = 50) -> list[Task]:
    """`n` distinct fused tasks from `seed`; distinct means a distinct operator chain."""
    rng = random.Random(seed)
    tasks: list[Task] = []
    seen: set[tuple[str, ...]] = set()
    attempts = 0
    while len(tasks) < n:
        family, chain = _pick_chain(rng)
        key = tuple(op.name for op in chain)
        if key in seen:
            attempts += 1
            if attempts > max_attempts * n:
                raise ValueError(f"only {len(tasks)} distinct chains found for n={n}")
            continue
        seen.add(key)
        digest = hashlib.sha256("/".join(key).encode()).hexdigest()[:6]
        task_id = f"synth_s{seed}_{len(tasks):04d}_{digest}"
        tasks.append(compose(family, chain, random.Random(f"{seed}/{len(tasks)}"), task_id, seed))
    return tasks
