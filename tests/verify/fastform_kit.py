"""Fast-form candidates (CuPy RawKernel/RawModule on torch's current stream) and the cheats the verifier must catch.

Problems come from gpu_kit (add+relu) plus a row sum; each cheat names the defence that must catch it at run time.
"""

from __future__ import annotations

PROBLEM_ROWSUM = '''\
import torch
import torch.nn as nn

rows, cols = 4096, 4096


class Model(nn.Module):
    def forward(self, a, b):
        return a.sum(dim=1) + b


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows)]


def get_init_inputs():
    return []
'''

_ADD_RELU_SRC = r'''
ADD_RELU = r"""
extern "C" __global__ void add_relu(const float* a, const float* b, float* y, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = a[i] + b[i]; y[i] = v > 0.f ? v : 0.f; }
}
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""
module = cp.RawModule(code=ADD_RELU)
add_relu = module.get_function("add_relu")
spin = module.get_function("spin")
'''

_HEAD = "import cupy as cp\nimport torch\nimport torch.nn as nn\n" + _ADD_RELU_SRC


def add_relu_candidate(body: str) -> str:
    """A ModelNew for add+relu whose forward is `body` (a and b in scope)."""
    lines = "\n".join("        " + line for line in body.strip().splitlines())
    return _HEAD + f'''

class ModelNew(nn.Module):
    def forward(self, a, b):
{lines}
'''


CORRECT = add_relu_candidate("""
a, b = a.contiguous(), b.contiguous()
y = torch.empty_like(a)
with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
    n = a.numel()
    add_relu(((n + 255) // 256,), (256,), (a.data_ptr(), b.data_ptr(), y.data_ptr(), cp.int64(n)))
return y
""")

# The work is CuPy's library (its `cupy_add`/`cupy_maximum` kernels): the census must not count it as the candidate's.
LIBRARY_ONLY = add_relu_candidate("""
y = torch.empty_like(a)
with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
    out = cp.from_dlpack(y)
    cp.maximum(cp.from_dlpack(a) + cp.from_dlpack(b), 0, out=out)
return y
""")

# The RawKernel runs and writes y, but what is returned does not depend on it (0 * y): its output is unused.
DECOY = add_relu_candidate("""
y = torch.empty_like(a)
with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
    n = a.numel()
    add_relu(((n + 255) // 256,), (256,), (a.data_ptr(), b.data_ptr(), y.data_ptr(), cp.int64(n)))
return torch.relu(a + b) + 0.0 * y.nan_to_num(0.0, 0.0, 0.0)
""")

# The answer is right and computed on the current stream; ~8 ms of spinning is left on a CuPy stream of its own.
TRAILING_SIDE_WORK = add_relu_candidate("""
y = torch.empty_like(a)
with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
    n = a.numel()
    add_relu(((n + 255) // 256,), (256,), (a.data_ptr(), b.data_ptr(), y.data_ptr(), cp.int64(n)))
with cp.cuda.Stream(non_blocking=True):
    spin((1,), (1,), (cp.int64(16_000_000),))
return y
""")

ROWSUM = '''\
import cupy as cp
import torch
import torch.nn as nn

SOURCE = r"""
extern "C" __global__ void row_sum(const float* a, const float* b, float* out, int rows, int cols) {
    __shared__ float part[256];
    int r = blockIdx.x;
    float s = 0.f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += a[(long long)r * cols + c];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[r] = part[0] + b[r];
}
"""
row_sum = cp.RawModule(code=SOURCE).get_function("row_sum")


class ModelNew(nn.Module):
    def forward(self, a, b):
        a, b = a.contiguous(), b.contiguous()
        rows, cols = a.shape
        out = torch.empty(rows, device=a.device, dtype=a.dtype)
        with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
            row_sum((rows,), (256,), (a.data_ptr(), b.data_ptr(), out.data_ptr(), cp.int32(rows), cp.int32(cols)))
        return out
'''
