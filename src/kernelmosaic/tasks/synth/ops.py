"""The synthesizer's operator library: each operator writes its reference line(s), its spec statement(s)
(or marks the task inexpressible) and its phrase of the natural-language statement.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Build", "Op", "ELEMENTWISE"]


@dataclass
class Build:
    """Everything a chain accumulates while its operators are applied in order."""

    rng: random.Random
    family: str
    """`2d` ([batch, features]) or `4d` ([batch, channels, height, width])."""
    labels: tuple[str, ...] = ()
    channel: str = ""
    """Constant naming the feature / channel size after the head."""
    forward: list[str] = field(default_factory=list)
    init: list[str] = field(default_factory=list)
    init_args: list[tuple[str, object]] = field(default_factory=list)
    """(name, value) in `get_init_inputs()` order."""
    inputs: list[tuple[str, tuple[str, ...], str]] = field(default_factory=list)
    """(name, size constants, creation expression) in `get_inputs()` order."""
    spec: list[str] | None = field(default_factory=list)
    """Spec statements; None once an operator has no spec form (learned weights, convolution)."""
    phrases: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    current: str = "x"
    """Spec tensor holding the value so far."""
    step: int = 0
    normalized: bool = False
    reduced: bool = False

    def idx(self, labels: tuple[str, ...] | None = None) -> str:
        labels = self.labels if labels is None else labels
        return f"{self.current}[{', '.join(labels)}]" if labels else self.current

    def let(self, expr: str, labels: tuple[str, ...] | None = None) -> None:
        """Add `let tN[labels] = expr` (expr may use `{v}` for the current value) and make tN current."""
        labels = self.labels if labels is None else labels
        if self.spec is not None:
            self.step += 1
            name = f"t{self.step}"
            lhs = f"{name}[{', '.join(labels)}]" if labels else name
            self.spec.append(f"let {lhs} = {expr.format(v=self.idx())}")
            self.current = name
        self.labels = labels

    def param(self, name: str, value: object) -> str:
        self.init_args.append((name, value))
        self.init.append(f"self.{name} = {name}")
        return name


@dataclass(frozen=True)
class Op:
    name: str
    title: str
    apply: Callable[[Build], None]
    families: tuple[str, ...] = ("2d", "4d")


def _elementwise(name: str, title: str, torch_expr: str, spec_expr: str, phrase: str) -> Op:
    def apply(b: Build) -> None:
        b.forward.append(f"y = {torch_expr}")
        b.let(spec_expr)
        b.phrases.append(phrase)
        b.tags.append(name)
    return Op(name, title, apply)


def _bias(b: Build) -> None:
    b.inputs.append(("bias", (b.channel,), f"torch.randn({b.channel})"))
    if b.spec is not None:
        b.spec.append(f"input bias: f32[{b.channel}]")
    view = "bias" if b.family == "2d" else "bias.view(1, -1, 1, 1)"
    b.forward.append(f"y = y + {view}")
    b.let(f"{{v}} + bias[{b.labels[1]}]")
    b.phrases.append(f"adds the vector `bias` of length {b.channel} along dimension 1")
    b.tags.append("bias")


def _scale(b: Build) -> None:
    value = b.rng.choice([0.5, 1.5, 2.0, 3.0])
    b.param("scale", value)
    if b.spec is not None:
        b.spec.insert(0, f"param scale: f32 = {value}")
    b.forward.append("y = y * self.scale")
    b.let("{v} * scale")
    b.phrases.append(f"multiplies by the scalar constructor argument `scale` ({value} in get_init_inputs)")
    b.tags.append("scale")


def _leaky(b: Build) -> None:
    slope = b.rng.choice([0.01, 0.1, 0.2])
    b.forward.append(f"y = torch.nn.functional.leaky_relu(y, negative_slope={slope})")
    b.let(f"where({{v}} > 0.0, {{v}}, {slope} * {{v}})")
    b.phrases.append(f"applies LeakyReLU with negative slope {slope}")
    b.tags.append("leaky_relu")


def _clamp(b: Build) -> None:
    lo = b.rng.choice([-1.0, -0.5, -2.0])
    hi = b.rng.choice([0.5, 1.0, 2.0])
    b.forward.append(f"y = torch.clamp(y, {lo}, {hi})")
    b.let(f"clamp({{v}}, {lo}, {hi})")
    b.phrases.append(f"clamps to [{lo}, {hi}]")
    b.tags.append("clamp")


ELEMENTWISE = [
    Op("bias", "Bias", _bias), Op("scale", "Scale", _scale), Op("leaky_relu", "LeakyReLU", _leaky),
    Op("clamp", "Clamp", _clamp),
    _elementwise("relu", "ReLU", "torch.relu(y)", "relu({v})", "applies ReLU"),
    _elementwise("gelu", "GELU", "torch.nn.functional.gelu(y)", "gelu({v})", "applies GELU (exact, erf form)"),
    _elementwise("tanh", "Tanh", "torch.tanh(y)", "tanh({v})", "applies tanh"),
    _elementwise("sigmoid", "Sigmoid", "torch.sigmoid(y)", "sigmoid({v})", "applies the logistic sigmoid"),
    _elementwise("silu", "SiLU", "y * torch.sigmoid(y)", "{v} * sigmoid({v})", "applies SiLU (x * sigmoid(x))"),
    _elementwise("softplus", "Softplus", "torch.nn.functional.softplus(y)", "softplus({v})", "applies softplus"),
    _elementwise("mish", "Mish", "y * torch.tanh(torch.nn.functional.softplus(y))", "{v} * tanh(softplus({v}))",
                 "applies Mish (x * tanh(softplus(x)))"),
    _elementwise("elu", "ELU", "torch.nn.functional.elu(y)", "where({v} > 0.0, {v}, exp({v}) - 1.0)",
                 "applies ELU with alpha 1"),
    _elementwise("square", "Square", "y * y", "{v} * {v}", "squares each element"),
]
