"""Workers start with a cleaned environment and a safe import path; what a candidate prints is scrubbed.

The attack is the one a reviewer ran: a candidate whose C++ static initializer (no finding in the static rules:
it runs at load, before `forward`) prints the caller's credentials from `getenv` and from the environment block
in /proc, and whose Python prints its `sys.path`. The verdict, and so the model's next prompt, the store and the
SFT export, must hold no secret, and the worker's scratch folder must not be on its import path.
"""

from __future__ import annotations

import pytest

from kernelmosaic.scrub import scrub, scrub_json
from kernelmosaic.verify import Verifier
from kernelmosaic.verify.clean_env import allowed, clean_env

from .kit import PROBLEM_ADD_RELU, write

SECRET = "sk-proj-Zq7hGxY2kP9wL4mN8vB3cR6tJ1dF5sA0"
HF = "hf_QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUiOp12"
DB = "postgresql://kmuser:s3cretpass@db.internal:5432/km"

LEAKY = r'''
import sys
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>

namespace {
struct Dump {
    Dump() {
        const char* names[] = {"OPENAI_API_KEY", "HF_TOKEN", "KERNELMOSAIC_DB", "KM_PLAIN_SECRET_VALUE"};
        for (const char* n : names) {
            const char* v = std::getenv(n);
            std::printf("env %s=%s\n", n, v ? v : "(unset)");
        }
        int fd = ::openat(AT_FDCWD, "/proc/self/environ", O_RDONLY);
        if (fd >= 0) {
            static char buf[1 << 16];
            ssize_t got = ::read(fd, buf, sizeof(buf) - 1);
            for (ssize_t i = 0; i < got; ++i) if (buf[i] == 0) buf[i] = '\n';
            buf[got > 0 ? got : 0] = 0;
            std::printf("environ:\n%s\n", buf);
            ::close(fd);
        }
        std::fflush(stdout);
    }
} dump_at_load;
}

torch::Tensor add_relu_leaky(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous(), bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    for (int64_t i = 0; i < ac.numel(); ++i) { float v = pa[i] + pb[i]; po[i] = v > 0.f ? v : 0.f; }
    std::printf("wrong on purpose: the verdict must show the output tail\n");
    po[0] += 1.0f;
    return out;
}
"""

ext = load_inline(name="km_leaky_env", cpp_sources=CPP, functions=["add_relu_leaky"], extra_cflags=["-O2"])
print("sys.path:", sys.path, flush=True)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_relu_leaky(a, b)
'''


def test_clean_env_keeps_the_toolchain_and_drops_credentials():
    source = {"PATH": "/usr/bin", "HOME": "/root", "LC_ALL": "C.UTF-8", "CUDA_HOME": "/usr/local/cuda",
              "TORCH_CUDA_ARCH_LIST": "9.0", "TRITON_CACHE_DIR": "/tmp/t", "OMP_NUM_THREADS": "2",
              "OPENAI_API_KEY": SECRET, "HF_TOKEN": HF, "KERNELMOSAIC_DB": DB, "DATABASE_URL": DB,
              "AWS_SECRET_ACCESS_KEY": "x" * 40, "TORCH_HUB_TOKEN": "y" * 20, "GITHUB_TOKEN": "z" * 20,
              "KERNELMOSAIC_OPENAI_BASE_URL": "http://localhost:8000/v1", "SOME_RANDOM_VAR": "1"}
    env = clean_env(source, extra={"KM_WORKER_SCRATCH": "/tmp/x"})
    assert {"PATH", "HOME", "LC_ALL", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST", "TRITON_CACHE_DIR", "OMP_NUM_THREADS",
            "KM_WORKER_SCRATCH"} <= set(env)
    for gone in ("OPENAI_API_KEY", "HF_TOKEN", "KERNELMOSAIC_DB", "DATABASE_URL", "AWS_SECRET_ACCESS_KEY",
                 "TORCH_HUB_TOKEN", "GITHUB_TOKEN", "KERNELMOSAIC_OPENAI_BASE_URL", "SOME_RANDOM_VAR"):
        assert gone not in env, gone
    assert not allowed("CUDA_HOME", DB)  # credentials in a URL, whatever the name


def test_scrub_replaces_env_secrets_and_token_shapes(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "correct-horse-battery")
    text = (f"key {SECRET} tok {HF} db {DB} pw correct-horse-battery task-abcdefghijklmnopqrstuvwxyz0123 "
            "Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345")
    out = scrub(text)
    for secret in (SECRET, HF, "s3cretpass", "correct-horse-battery", "abcdefghijklmnopqrstuvwxyz012345"):
        assert secret not in out
    assert "task-abcdefghijklmnopqrstuvwxyz0123" in out  # a word that merely contains `sk-` is left alone
    assert "[redacted:MY_SERVICE_PASSWORD]" in out
    nested = scrub_json({"a": [SECRET, 1, {"b": HF}], "n": None})
    assert nested == {"a": ["[redacted:openai-key]", 1, {"b": "[redacted:hf-token]"}], "n": None}


@pytest.mark.slow
def test_candidate_cannot_print_the_callers_secrets(cpu_verifier, tmp_path, monkeypatch):
    plain = "pLaInSeCrEt-0f9e8d7c6b5a"  # no token shape: only the environment allowlist keeps it out
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("HF_TOKEN", HF)
    monkeypatch.setenv("KERNELMOSAIC_DB", DB)
    monkeypatch.setenv("KM_PLAIN_SECRET_VALUE", plain)  # an allowed prefix with a credential-like name
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    candidate = write(tmp_path, "candidate.py", LEAKY)
    # static checks off: its binary calls `openat` (a `reference-access` reject before it runs); what is tested here
    # is what the worker's environment holds when native code reads it anyway
    with Verifier(cpu_verifier.config.model_copy(update={"static_checks": False})) as verifier:
        verdict = verifier.verify(problem, candidate)
    tail = verdict.candidate_output_tail
    # The initializer prints where the extension loads: the candidate's worker (a builder never loads what it built).
    dumped = verdict.model_dump_json()
    assert "env OPENAI_API_KEY=(unset)" in tail, (verdict.status, verdict.message, tail)
    assert "environ:" in tail and "sys.path:" in tail, tail
    for secret in (SECRET, HF, "s3cretpass", plain):
        assert secret not in dumped
    assert not verdict.accepted  # it is wrong on purpose; the tail is kept for rejected verdicts
    path_line = next(line for line in tail.splitlines() if line.startswith("sys.path:"))
    assert "'km-" not in path_line and "/km-" not in path_line and "''" not in path_line, path_line


def test_workers_threads_sleep_while_they_wait_whatever_the_caller_asked(monkeypatch):
    """OpenMP spinning would count a waiting thread's spin as the call's work on a loaded host (pool.WAIT_ASLEEP)."""
    from kernelmosaic.verify.pool import worker_env

    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    monkeypatch.setenv("KMP_BLOCKTIME", "200")
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    env = worker_env({"KM_X": "1"})
    assert (env["OMP_WAIT_POLICY"], env["KMP_BLOCKTIME"]) == ("PASSIVE", "0")
    assert env["OMP_NUM_THREADS"] == "2" and env["KM_X"] == "1"  # the rest of the caller's OpenMP settings stay
