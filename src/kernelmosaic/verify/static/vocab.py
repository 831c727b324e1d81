"""Vocabulary of the static analysis: which PyTorch/ATen names allocate or reshape (allowed) and which compute.

Kept as plain sets so a reviewer can read the whole judgement in one place.
"""

from __future__ import annotations

__all__ = [
    "TORCH_ALLOWED", "TORCH_AUX", "TENSOR_METHODS_ALLOWED", "TENSOR_METHODS_COMPUTE", "NN_NONCOMPUTE",
    "TORCH_NONCALL_OK", "ATEN_ALLOWED", "CPP_METHODS_ALLOWED", "TRITON_WRAPPERS", "DISPATCHED_NONCOMPUTE",
    "DISPATCHED_COMPUTE", "DISPATCHED_COMPUTE_FAMILIES", "dispatched_kind", "dispatched_names",
]

# Calls that hand a Triton kernel back, launchable and traceable (`wrap_triton(kernel)[grid](...)` inside a
# `@torch.library.triton_op`): they register nothing.
TRITON_WRAPPERS = {"torch.library.wrap_triton", "torch.library.capture_triton"}

# torch.* callables that allocate, describe or move tensors without computing on their values.
TORCH_ALLOWED = {
    "torch.empty", "torch.empty_like", "torch.zeros", "torch.zeros_like", "torch.ones", "torch.ones_like",
    "torch.full", "torch.full_like", "torch.empty_strided", "torch.tensor", "torch.as_tensor", "torch.from_numpy",
    "torch.Size", "torch.device", "torch.dtype", "torch.finfo", "torch.iinfo", "torch.no_grad",
    "torch.inference_mode", "torch.enable_grad", "torch.is_tensor", "torch.is_floating_point", "torch.numel",
    "torch.get_default_dtype", "torch.is_grad_enabled", "torch.promote_types", "torch.result_type",
    "torch.broadcast_shapes", "torch.is_complex",
    # random draws that read no tensor's values: a reference that draws its state in forward (KernelBench L3's
    # LSTMs: `h0 = torch.randn(...)`) is answered by drawing the same way
    "torch.randn", "torch.rand", "torch.randint", "torch.randperm", "torch.randn_like", "torch.rand_like",
    "torch.randint_like",
    "torch.cuda.current_stream", "torch.cuda.current_device", "torch.cuda.default_stream",
    "torch.cuda.is_available", "torch.cuda.device_count", "torch.cuda.get_device_properties",
    "torch.cuda.get_device_capability", "torch.cuda.get_device_name", "torch.cuda.synchronize",
    "torch.cuda.device", "torch.cuda.set_device",
    "torch.utils.cpp_extension.load_inline", "torch.nn.Parameter", "torch.autograd.Function",
    # Function forms of the view/layout methods allowed below.
    "torch.reshape", "torch.flatten", "torch.transpose", "torch.permute", "torch.squeeze", "torch.unsqueeze",
    "torch.narrow", "torch.split", "torch.chunk", "torch.unbind", "torch.t", "torch.movedim", "torch.swapaxes",
    "torch.broadcast_to", "torch.broadcast_tensors", "torch.as_strided", "torch.select", "torch.set_grad_enabled",
    # Gathering tensors into one (a copy, like `.contiguous()`): a time loop's outputs stacked into a sequence.
    "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
    # Profiling annotations and compile-state queries: no work on tensors.
    "torch.cuda.nvtx.range_push", "torch.cuda.nvtx.range_pop", "torch.cuda.nvtx.range", "torch.cuda.nvtx.mark",
    "torch.autograd.profiler.record_function", "torch.profiler.record_function", "torch.jit.is_scripting",
    "torch.jit.is_tracing", "torch.compiler.is_compiling", "torch.cuda.memory_allocated",
    "torch.cuda.max_memory_allocated",
    # TorchScript's and Dynamo's markers: outside scripting and compiling they hand the function back unchanged.
    "torch.jit.ignore", "torch.jit.unused", "torch.jit.export", "torch.compiler.disable",
    # Queries of settings and of the build: they read a number or a flag and compute nothing (a thread pool's size).
    "torch.get_num_threads", "torch.get_num_interop_threads", "torch.is_inference_mode_enabled",
    "torch.is_autocast_enabled", "torch.get_float32_matmul_precision", "torch.are_deterministic_algorithms_enabled",
    "torch.cuda.is_initialized", "torch.cuda.get_arch_list", "torch.backends.openmp.is_available",
    "torch.backends.mkldnn.is_available", "torch.backends.cuda.is_built", "torch.typename",
}
# Index-building helpers: small work, recorded as a flag rather than a reject.
TORCH_AUX = {"torch.arange", "torch.linspace", "torch.logspace"}

# Tensor methods that only describe, view, move or allocate.
TENSOR_METHODS_ALLOWED = {
    "view", "view_as", "reshape", "reshape_as", "contiguous", "permute", "transpose", "t", "unsqueeze",
    "squeeze", "flatten", "unflatten", "expand", "expand_as", "narrow", "split", "chunk", "unbind", "select",
    "as_strided", "movedim", "swapaxes", "to", "cuda", "cpu", "float", "half", "bfloat16", "double", "int",
    "long", "bool", "type_as", "detach", "requires_grad_", "data_ptr", "size", "dim", "ndimension", "numel",
    "nelement", "stride", "storage_offset", "element_size", "is_contiguous", "get_device", "new_empty",
    "new_zeros", "new_ones", "new_full", "new_empty_strided", "new_tensor", "fill_", "zero_", "clone", "copy_",
    "item", "tolist", "pin_memory", "record_stream", "untyped_storage", "__getitem__", "__len__", "is_cuda",
    "type", "numpy", "is_floating_point", "dim_order",
}
# Tensor methods that compute. Used when the receiver's type is unknown (a tensor of known type is judged
# by the allow-list instead, so this list only needs the names a model is likely to use).
TENSOR_METHODS_COMPUTE = {
    "matmul", "mm", "bmm", "mv", "dot", "addmm", "addbmm", "baddbmm", "addmv", "einsum", "outer", "kron",
    "sum", "mean", "prod", "std", "var", "norm", "max", "min", "amax", "amin", "argmax", "argmin", "cumsum",
    "cumprod", "logsumexp", "softmax", "log_softmax", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sqrt", "rsqrt", "pow", "square", "abs", "neg", "reciprocal", "sign", "sin", "cos", "tan", "tanh",
    "sigmoid", "relu", "relu_", "gelu", "silu", "elu", "leaky_relu", "hardtanh", "softplus", "clamp", "clamp_",
    "clip", "add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "true_divide", "floor_divide",
    "remainder", "fmod", "addcmul", "addcdiv", "lerp", "where", "masked_fill", "masked_fill_", "gather",
    "scatter", "scatter_add", "index_select", "index_add", "take", "sort", "argsort", "topk", "kthvalue",
    "median", "mode", "all", "any", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "floor", "ceil",
    "round", "trunc", "frac", "erf", "erfc", "tril", "triu", "diag", "diagonal", "trace", "flip", "roll",
    "repeat", "repeat_interleave", "tile", "cross", "cumulative_trapezoid", "conv2d", "linear", "uniform_",
    "normal_", "bernoulli", "bernoulli_", "exponential_", "random_", "cauchy_", "log_normal_", "geometric_",
    "nan_to_num", "hardsigmoid", "hardswish", "mish", "selu", "celu", "logit", "logical_and", "logical_or",
    "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "count_nonzero", "nonzero", "unique", "histc",
    "bincount", "pad", "layer_norm", "group_norm", "batch_norm", "dropout", "apply_", "map_", "__matmul__",
    "__rmatmul__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__pow__", "__neg__", "__abs__", "__iadd__", "__imul__", "__isub__", "__itruediv__",
}
# nn modules whose call does no arithmetic. Dropout: the identity in eval mode or at p=0 (attention blocks keep the
# reference's `attn_dropout`/`resid_dropout` and call them); at p>0 in training it draws a random mask, which no
# candidate can use to match a deterministic reference.
NN_NONCOMPUTE = {"torch.nn.Identity", "torch.nn.Flatten", "torch.nn.Unflatten", "torch.nn.Dropout",
                 "torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d"}
# torch attributes that may be referenced (not called) anywhere: dtypes, layouts, types.
TORCH_NONCALL_OK = {"Tensor", "Size", "device", "dtype", "strided", "contiguous_format", "channels_last",
                    "preserve_format", "float", "half", "double", "long", "int", "bool", "cfloat"}

# ATen/torch C++ functions (last component) that allocate, describe, guard or fetch the current stream.
ATEN_ALLOWED = {
    "empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like", "empty_strided",
    "scalar_tensor", "from_blob", "tensor", "randn", "rand", "randint", "randperm", "randn_like", "rand_like", "dtype", "device", "requires_grad", "layout", "memory_format", "getCurrentCUDAStream",
    "getDefaultCUDAStream", "getCurrentDeviceProperties", "getDeviceProperties", "current_device",
    "device_of", "globalContext", "elementSize", "toString", "typeMetaToScalarType", "irange", "get_default_dtype",
    "check_size_nonnegative", "size", "numel", "is_available", "device_count", "nullopt", "make_optional",
    "optional", "opmath_type", "acc_type", "acc_type_device", "variable_list", "tensor_list", "parallel_for",
    "parallel_reduce", "get_num_threads", "in_parallel_region", "toUnderlying", "kCUDA", "kCPU",
    # the free-function forms of the views allowed as methods (`torch::view_as_complex(out)`: no element computed)
    "view_as_real", "view_as_complex", "reshape", "flatten", "unflatten", "unsqueeze", "squeeze", "permute",
    "transpose", "narrow", "select", "as_strided", "movedim", "swapaxes", "expand",
}
# C++ tensor methods that describe, view or allocate (the rest of TENSOR_METHODS_COMPUTE is compute).
CPP_METHODS_ALLOWED = TENSOR_METHODS_ALLOWED | {
    "sizes", "strides", "options", "scalar_type", "dtype", "device", "defined", "mutable_data_ptr",
    "const_data_ptr", "packed_accessor32", "packed_accessor64", "accessor", "is_same_size", "resize_",
}

# The same judgement at run time, over the dispatcher operators forward calls outside the candidate's kernel calls (the
# probe's dispatch mode records them, under `strict`): what PyTorch runs after its composite operators decomposed
# (`x.contiguous()` arrives as `clone`, `F.linear` as `addmm` or `mm`, `torch.stack` as `cat`). Names without the
# `aten::` prefix and the overload. Operators that allocate, view, move or copy (the dispatcher's forms of the
# allowed calls above):
DISPATCHED_NONCOMPUTE = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor", "lift", "lift_fresh",
    "lift_fresh_copy", "fill_", "zero_", "resize_", "resize_as_", "set_", "copy_", "_copy_from",
    "_copy_from_and_resize", "clone", "_to_copy", "detach", "detach_", "alias", "view", "_unsafe_view", "reshape",
    "_reshape_alias", "as_strided", "as_strided_", "permute", "transpose", "transpose_", "t", "t_", "expand",
    "squeeze", "squeeze_", "unsqueeze", "unsqueeze_", "slice", "select", "narrow", "split", "split_with_sizes",
    "unsafe_split", "chunk", "unsafe_chunk", "unbind", "movedim", "view_as_real", "view_as_complex", "cat", "stack",
    "index", "_local_scalar_dense", "is_same_size", "_has_compatible_shallow_copy_type", "record_stream",
    "pin_memory", "_pin_memory", "is_pinned", "resolve_conj", "resolve_neg", "sym_size", "sym_stride", "sym_numel",
    "sym_storage_offset", "arange", "linspace", "logspace", "contiguous", "to", "flatten", "unflatten",
    "index_put", "_index_put_impl", "put", "_unsafe_index", "_unsafe_index_put",
    # the random draws allowed above (`torch.randn` arrives as `normal_` on a new tensor): they read no values
    "rand", "randn", "randint", "rand_like", "randn_like", "randperm", "normal_", "uniform_", "random_",
}
# Operators that compute on tensor values (PyTorch doing the work the candidate's kernels are judged for), by name and,
# below, by family prefix; any other operator is reported unclassified (a flag) rather than judged.
DISPATCHED_COMPUTE = {
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "matmul", "linear", "einsum", "outer",
    "addr", "kron", "tensordot", "convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "_softmax", "_log_softmax", "softmax", "log_softmax", "layer_norm",
    "group_norm", "batch_norm", "instance_norm", "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide",
    "remainder", "fmod", "pow", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "reciprocal", "neg", "abs", "sign", "sgn", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "sigmoid", "logit", "erf", "erfc", "erfinv", "relu", "relu6", "gelu", "silu", "mish", "elu", "selu",
    "celu", "leaky_relu", "hardtanh", "hardsigmoid", "hardswish", "softplus", "softshrink", "hardshrink", "prelu",
    "_prelu_kernel", "glu", "threshold", "clamp", "clamp_min", "clamp_max", "clip", "where", "maximum", "minimum",
    "fmax", "fmin", "sum", "mean", "prod", "var", "std", "var_mean", "std_mean", "norm", "max", "min", "amax", "amin",
    "aminmax", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "logsumexp", "logcumsumexp", "all", "any",
    "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "nan_to_num", "floor", "ceil", "round", "trunc",
    "frac", "lerp", "addcmul", "addcdiv", "masked_fill", "masked_select", "gather", "scatter",
    "scatter_add", "scatter_reduce", "index_select", "index_add", "take", "take_along_dim", "sort", "argsort", "topk", "kthvalue", "median", "nanmedian", "mode",
    "tril", "triu", "diag", "diag_embed", "diagonal", "trace", "flip", "roll", "rot90", "repeat", "repeat_interleave",
    "tile", "cross", "constant_pad_nd", "pad", "embedding", "embedding_bag", "_embedding_bag", "dropout",
    "native_dropout", "bernoulli", "bernoulli_", "exponential_", "multinomial", "logical_and", "logical_or", "logical_not",
    "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "count_nonzero", "nonzero", "unique",
    "_unique2", "histc", "bincount", "cdist", "_cdist_forward", "pdist", "cosine_similarity", "pairwise_distance",
    "grid_sampler_2d", "im2col", "col2im", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "unfold",
    "_weight_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "nll_loss_forward", "nll_loss2d_forward",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "hinge_embedding_loss", "margin_ranking_loss",
    "triplet_margin_loss", "cross_entropy_loss", "ctc_loss", "rms_norm", "_fused_rms_norm", "lstm", "gru", "rnn_tanh",
    "rnn_relu", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
    "nansum", "nanmean", "index_reduce", "inner", "xlogy", "hypot", "bucketize", "searchsorted", "dist", "renorm",
    "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
    "__irshift__", "bitwise_left_shift", "bitwise_right_shift",
    # an indexed write that adds into its target (`index_put_(..., accumulate=True)`, `put_(..., accumulate=True)`):
    # the dispatch mode names it so (kmworker/intercept.py); without accumulate it is a write (below)
    "index_put_accumulate",
}
DISPATCHED_COMPUTE_FAMILIES = (
    "native_", "_native_", "cudnn_", "miopen_", "mkldnn_", "_mkldnn", "_scaled_dot_product", "scaled_dot_product",
    "_flash_attention", "_efficient_attention", "_cudnn_attention", "max_pool", "avg_pool", "adaptive_", "_adaptive_",
    "fractional_max_pool", "lp_pool", "upsample_", "_upsample_", "reflection_pad", "replication_pad", "linalg_",
    "_linalg_", "fft_", "_fft_", "special_", "_foreach_", "_fused_", "slow_conv", "_slow_conv", "_nnpack",
    "thnn_conv", "_thnn_", "_int_mm", "_scaled_mm", "_addmm_activation", "_log_softmax", "_softmax",
)


def dispatched_names(op: str) -> tuple[str, str]:
    """An operator's name without namespace and overload, and its base name: `aten::add_.Tensor` -> (`add_`, `add`)."""
    ns, sep, rest = op.partition("::")
    name = (rest if sep else op).split(".", 1)[0]
    return name, name[:-1] if name.endswith("_") and not name.endswith("__") else name


def dispatched_kind(op: str) -> str:
    """`noncompute`, `compute` or `unknown` for a dispatcher operator name (`aten::mm`, `aten::add_.Tensor`, `mm`):
    operators of other namespaces are the candidate's own (`noncompute`); in-place (`add_`) and out forms judged by
    their base name."""
    ns, sep, _ = op.partition("::")
    if sep and ns != "aten":
        return "noncompute"
    name, base = dispatched_names(op)
    if name in DISPATCHED_NONCOMPUTE or base in DISPATCHED_NONCOMPUTE:
        return "noncompute"
    if base in DISPATCHED_COMPUTE or name in DISPATCHED_COMPUTE or base.startswith(DISPATCHED_COMPUTE_FAMILIES):
        return "compute"
    return "unknown"
