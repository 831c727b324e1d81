"""Which module constants size only the inputs (tasks.shapes.input_size_constants), the rule behind derived small
shapes (audits, the sanitizer) and derived alternative shapes (robustness): literals and arithmetic of literals
qualify; constants computed from other constants, or read by the model, do not."""

from __future__ import annotations

import ast

from kernelmosaic.tasks.shapes import (
    apply_shape_overrides,
    derive_alternatives,
    input_size_constants,
    small_shapes,
)

PROBLEM = '''import torch
import torch.nn as nn

N = 2048 * 2
rows = 1 << 12
K = 64
half = N // 2


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, k))

    def forward(self, a, b):
        return a @ self.w + b[: a.shape[0]]


def get_inputs():
    return [torch.randn(rows, K), torch.randn(N + half, K)]


def get_init_inputs():
    return [K]
'''


def test_arithmetic_of_literals_sizes_the_inputs_like_a_literal():
    names = input_size_constants(PROBLEM)
    assert "N" in names and "rows" in names  # `2048 * 2` and `1 << 12` fold to ints
    assert "K" not in names, "read by get_init_inputs: changing it changes the model"
    assert "half" not in names, "computed from N: it follows N and is not a size of its own"


def test_small_shapes_and_alternatives_rewrite_an_expression_constant():
    small = small_shapes(PROBLEM)
    assert small["N"] == (4096 // 16) | 1 and small["rows"] == (4096 // 16) | 1
    rewritten = apply_shape_overrides(PROBLEM, small)
    assert f"N = {small['N']}\n" in rewritten and "half = N // 2" in rewritten
    ast.parse(rewritten)
    (alternative,) = derive_alternatives(PROBLEM)
    assert set(alternative) == {"N", "rows"} and all(v % 2 == 1 for v in alternative.values())


def test_the_sanitizers_first_shapes_also_shrink_the_models_widths_keeping_what_divides_them():
    from kernelmosaic.tasks.shapes import small_model_shapes

    source = (
        "import torch\n"
        "batch_size = 1024\nin_features = 8192\nout_features = 8192\nnum_heads = 8\nchannels = 96\n"
        "dim = 1\nscale = 0.5\nsteps = in_features * 2\n"
        "def get_inputs():\n    return [torch.randn(batch_size, in_features)]\n"
        "def get_init_inputs():\n    return [in_features, out_features, num_heads, channels, dim, scale, steps]\n"
    )
    shapes = small_model_shapes(source)
    # the input-only size as for small_shapes (odd, a sixteenth); widths a sixteenth keeping their power-of-two
    # factor; small constants, floats and derived constants untouched
    assert shapes == {"batch_size": 65, "in_features": 512, "out_features": 512, "channels": 32}
    assert all(shapes[n] % 8 == 0 for n in ("in_features", "out_features"))
    assert small_model_shapes("import torch\nn = 4096\ndef get_inputs():\n    return [torch.randn(n)]\n") == {}
    assert small_model_shapes("def broken(:\n") == {}


# KernelBench's losses and scans size their inputs with a tuple beside the batch, and some tie the two (a hinge loss
# broadcasts a (batch,) target against the (batch, *input_shape) predictions, so input_shape[0] must be batch_size).
TUPLE_PROBLEM = '''import torch
import torch.nn as nn

batch_size = 4096
input_shape = (4096,)
ones = (1, 4096)


class Model(nn.Module):
    def forward(self, predictions, targets, scale):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0)) + scale.sum()


def get_inputs():
    return [torch.rand(batch_size, *input_shape), torch.randint(0, 2, (batch_size,)).float() * 2 - 1,
            torch.rand(*ones)]


def get_init_inputs():
    return []
'''


def test_a_tuple_of_sizes_moves_element_by_element_and_keeps_ties_and_broadcast_axes():
    from kernelmosaic.tasks.shapes import size_check_sizes

    assert input_size_constants(TUPLE_PROBLEM) == ["batch_size", "input_shape", "ones"]
    small = small_shapes(TUPLE_PROBLEM)
    assert small == {"batch_size": 257, "input_shape": (257,), "ones": (1, 257)}
    check = size_check_sizes(TUPLE_PROBLEM).overrides
    assert check == {"batch_size": 256, "input_shape": (256,), "ones": (1, 256)}
    (alternative,) = derive_alternatives(TUPLE_PROBLEM)
    assert alternative["input_shape"][0] == alternative["batch_size"] and alternative["ones"][0] == 1
    for overrides in (small, check, alternative):
        namespace: dict = {}
        exec(compile(apply_shape_overrides(TUPLE_PROBLEM, overrides), "problem", "exec"), namespace)
        inputs = namespace["get_inputs"]()
        assert inputs[0].shape == (overrides["batch_size"], *overrides["input_shape"])
        namespace["Model"]()(*inputs)  # the tie holds: the reference runs at every derived size


def test_a_tuple_that_is_not_all_sizes_is_left_alone():
    source = TUPLE_PROBLEM.replace("ones = (1, 4096)", "ones = (1, 4096.0)").replace("torch.rand(*ones)",
                                                                                      "torch.rand(1, int(ones[1]))")
    assert "ones" not in input_size_constants(source)
    assert "ones" not in small_shapes(source)


def test_chained_and_unpacked_sizes_are_constants_and_rewrite_on_their_own_line():
    """KernelBench writes `height = width = 128` and `height, width = 128, 128`: both names are sizes of their own,
    moved by every rule, and the rewrite keeps the statement on its line (a traceback's line numbers stay true)."""
    from kernelmosaic.tasks.shapes import size_check_sizes

    for line in ("height = width = 128", "height, width = 128, 128  # the image"):
        source = ("import torch\nbatch = 16\n" + line + "\nchannels = 3\n\n\ndef get_inputs():\n"
                  "    return [torch.rand(batch, channels, height, width)]\n")
        assert input_size_constants(source) == ["batch", "height", "width", "channels"]
        assert small_shapes(source) == {"height": 33, "width": 33}
        assert size_check_sizes(source).overrides == {"batch": 32, "height": 32, "width": 32, "channels": 4}
        moved = apply_shape_overrides(source, {"height": 9, "width": 9})
        assert moved.splitlines()[2].startswith("height = 9; width = 9") and len(moved.splitlines()) == len(source.splitlines())
        assert moved.endswith(source.split(line, 1)[1]) and ("# the image" in moved) == ("# the image" in line)
        only = apply_shape_overrides(source, {"width": 7})  # the other name keeps its own text
        assert only.splitlines()[2].startswith("height = 128; width = 7")
        namespace: dict = {}
        exec(compile(moved, "problem", "exec"), namespace)
        assert namespace["get_inputs"]()[0].shape == (16, 3, 9, 9)


SHADOWED = '''import torch
import torch.nn as nn

batch_size = 4096
dim = 393216
scale = 8


class Model(nn.Module):
    bias_rows = scale

    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        def width():
            return x.shape[dim]
        return torch.log_softmax(x, dim=self.dim) * width()


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def test_a_parameter_named_like_a_constant_is_not_a_read_of_it_but_a_nested_global_read_is():
    # `__init__`'s own `dim` shadows the module's: only the nested function's `dim` reaches the constant.
    assert input_size_constants(SHADOWED) == ["batch_size"]
    # Without that nested read, `dim` sizes only the inputs and shrinks with the batch; the class body's read of
    # `scale` keeps it (it is not an input size in any case: get_inputs does not read it).
    plain = SHADOWED.replace("x.shape[dim]", "x.shape[1]")
    assert input_size_constants(plain) == ["batch_size", "dim"]
    assert small_shapes(plain) == {"batch_size": 257, "dim": 24577}
    assert "scale" not in input_size_constants(plain.replace("randn(batch_size, dim)", "randn(batch_size, dim, scale)"))
