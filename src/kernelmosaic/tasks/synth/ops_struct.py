"""Heads (the first, heavy operator), normalizations and reductions of the synthesizer's operator library."""

from __future__ import annotations

from kernelmosaic.tasks.synth.ops import Build, Op

__all__ = ["HEADS", "NORMS", "REDUCTIONS"]


def _matmul(b: Build) -> None:
    b.inputs += [("x", ("batch_size", "in_features"), "torch.randn(batch_size, in_features)"),
                 ("weight", ("out_features", "in_features"),
                  "torch.randn(out_features, in_features) / in_features ** 0.5")]
    b.forward.append("y = x @ weight.t()")
    b.spec += ["input x: f32[batch_size, in_features]", "input weight: f32[out_features, in_features]"]
    b.current, b.labels, b.channel = "x", ("b", "n"), "out_features"
    b.let("sum(k, x[b, k] * weight[n, k])")
    b.phrases.append("multiplies `x` (batch_size x in_features) by the transpose of the input matrix `weight` "
                     "(out_features x in_features)")
    b.tags.append("matmul")


def _linear(b: Build) -> None:
    b.inputs.append(("x", ("batch_size", "in_features"), "torch.randn(batch_size, in_features)"))
    b.init_args += [("in_features", "in_features"), ("out_features", "out_features")]
    b.init.append("self.linear = nn.Linear(in_features, out_features)")
    b.forward.append("y = self.linear(x)")
    b.spec, b.labels, b.channel = None, ("b", "n"), "out_features"
    b.phrases.append("applies the learned linear layer `nn.Linear(in_features, out_features)` to `x`")
    b.tags += ["linear", "gemm"]


def _features(b: Build) -> None:
    b.inputs.append(("x", ("batch_size", "out_features"), "torch.randn(batch_size, out_features)"))
    b.forward.append("y = x")
    b.spec.append("input x: f32[batch_size, out_features]")
    b.current, b.labels, b.channel = "x", ("b", "n"), "out_features"
    b.phrases.append("starts from `x` (batch_size x out_features)")


def _conv(b: Build) -> None:
    b.inputs.append(("x", ("batch_size", "in_channels", "height", "width"),
                     "torch.randn(batch_size, in_channels, height, width)"))
    b.init_args += [("in_channels", "in_channels"), ("out_channels", "out_channels")]
    b.init.append("self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)")
    b.forward.append("y = self.conv(x)")
    b.spec, b.labels, b.channel = None, ("b", "c", "h", "w"), "out_channels"
    b.phrases.append("applies the learned 3x3 convolution `nn.Conv2d(in_channels, out_channels, 3, padding=1)`")
    b.tags += ["conv2d", "convolution"]


def _image(b: Build) -> None:
    b.inputs.append(("x", ("batch_size", "out_channels", "height", "width"),
                     "torch.randn(batch_size, out_channels, height, width)"))
    b.forward.append("y = x")
    b.spec.append("input x: f32[batch_size, out_channels, height, width]")
    b.current, b.labels, b.channel = "x", ("b", "c", "h", "w"), "out_channels"
    b.phrases.append("starts from the image batch `x` (batch_size x out_channels x height x width)")


HEADS = [Op("matmul", "Matmul", _matmul, ("2d",)), Op("linear", "Linear", _linear, ("2d",)),
         Op("features", "", _features, ("2d",)), Op("conv2d", "Conv2d", _conv, ("4d",)),
         Op("image", "", _image, ("4d",))]


def _layer_norm(b: Build) -> None:
    b.forward.append("y = torch.nn.functional.layer_norm(y, (y.shape[-1],), eps=1e-5)")
    v, i = b.current, b.labels[0]
    if b.spec is not None:
        b.spec += [f"let mu{b.step}[{i}] = mean(k, {v}[{i}, k])",
                   f"let var{b.step}[{i}] = mean(k, ({v}[{i}, k] - mu{b.step}[{i}]) ** 2)"]
    b.let(f"({{v}} - mu{b.step}[{i}]) * rsqrt(var{b.step}[{i}] + 1e-5)")
    b.phrases.append("normalizes each row to zero mean and unit variance (LayerNorm over the last dimension, "
                     "eps 1e-5, no affine)")
    b.tags.append("layer_norm")


def _softmax(b: Build) -> None:
    b.forward.append("y = torch.softmax(y, dim=1)")
    v, lab = b.current, b.labels
    rest = ", ".join(lab[:1] + lab[2:])
    k_lab = ", ".join(lab[:1] + ("k",) + lab[2:])
    if b.spec is not None:
        s = b.step
        b.spec += [f"let m{s}[{rest}] = max(k, {v}[{k_lab}])",
                   f"let e{s}[{', '.join(lab)}] = exp({v}[{', '.join(lab)}] - m{s}[{rest}])"]
        b.current = f"e{s}"
        b.let(f"{{v}} / sum(k, e{s}[{k_lab}])")
    b.phrases.append("takes the softmax over dimension 1")
    b.tags.append("softmax")


def _instance_norm(b: Build) -> None:
    b.forward.append("y = torch.nn.functional.instance_norm(y, eps=1e-5)")
    v, s = b.current, b.step
    if b.spec is not None:
        b.spec += [f"let mu{s}[b, c] = mean(p, q, {v}[b, c, p, q])",
                   f"let var{s}[b, c] = mean(p, q, ({v}[b, c, p, q] - mu{s}[b, c]) ** 2)"]
    b.let(f"({{v}} - mu{s}[b, c]) * rsqrt(var{s}[b, c] + 1e-5)")
    b.phrases.append("normalizes each (sample, channel) plane to zero mean and unit variance (InstanceNorm, "
                     "eps 1e-5, no affine)")
    b.tags.append("instance_norm")


def _group_norm(b: Build) -> None:
    groups = b.rng.choice([2, 4])
    b.init_args.append(("groups", groups))
    b.init.append(f"self.norm = nn.GroupNorm(groups, {b.channel})")
    b.forward.append("y = self.norm(y)")
    b.spec = None
    b.phrases.append(f"applies a learned GroupNorm with `groups` = {groups} groups")
    b.tags.append("group_norm")


NORMS = [Op("layer_norm", "LayerNorm", _layer_norm, ("2d",)), Op("softmax", "Softmax", _softmax),
         Op("instance_norm", "InstanceNorm", _instance_norm, ("4d",)),
         Op("group_norm", "GroupNorm", _group_norm, ("4d",))]


def _reduce(kind: str, title: str) -> Op:
    def apply(b: Build) -> None:
        if b.family == "2d":
            dims, torch_dims, kept, bound = "(1,)", "dim=1", ("b",), ("k",)
            where = "over dimension 1"
        else:
            dims, torch_dims, kept, bound = "(2, 3)", "dim=(2, 3)", ("b", "c"), ("p", "q")
            where = "over the spatial dimensions (height, width)"
        full = b.labels[: len(kept)] + bound
        if kind == "logsumexp":
            b.forward.append(f"y = torch.logsumexp(y, {torch_dims})")
            if b.spec is not None:
                v, s = b.current, b.step
                b.spec.append(f"let m{s}[{', '.join(kept)}] = max({', '.join(bound)}, {v}[{', '.join(full)}])")
                b.let(f"m{s}[{', '.join(kept)}] + log(sum({', '.join(bound)}, exp({v}[{', '.join(full)}] - "
                      f"m{s}[{', '.join(kept)}])))", kept)
            else:
                b.labels = kept
        else:
            call = {"sum": "torch.sum", "mean": "torch.mean", "max": "torch.amax"}[kind]
            b.forward.append(f"y = {call}(y, dim={dims})")
            b.let(f"{kind}({', '.join(bound)}, {b.idx(full)})", kept)
        b.reduced = True
        b.phrases.append(f"reduces with {title.lower()} {where}")
        b.tags += [kind, "reduction"]
    return Op(kind, title, apply)


REDUCTIONS = [_reduce("sum", "Sum"), _reduce("mean", "Mean"), _reduce("max", "Max"),
              _reduce("logsumexp", "LogSumExp")]
