"""The default size check's sizes (no worker): which constants move, to what, and what the verdict's note says."""

from __future__ import annotations

from kernelmosaic.tasks.shapes import module_constants, size_check_sizes
from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.problem_shapes import alternatives_to_judge
from kernelmosaic.verify.requests import Alternative

MATMUL = """\
import torch
import torch.nn as nn

M = 1024 * 2
K = 4096
N = 48
hidden = 512


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = nn.Linear(N, hidden)

    def forward(self, a, b):
        return self.proj(torch.matmul(a, b))


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return [hidden]
"""


def test_only_input_sizes_move_keeping_their_power_of_two_factor():
    check = size_check_sizes(MATMUL)
    # N sizes the weights too (the model reads it): kept, so the problem's own tie between them holds
    assert check.overrides == {"M": 128, "K": 256} and check.why == ""
    for name, new in check.overrides.items():
        old = int(module_constants(MATMUL)[name])
        assert new != old and new % min(old & -old, 32) == 0


def test_small_sizes_and_odd_sizes():
    one = "import torch\nn = {}\ndef get_inputs():\n    return [torch.randn(n)]\ndef get_init_inputs():\n    return []\n"
    moved = {v: size_check_sizes(one.format(v)).overrides["n"] for v in (3, 4, 16, 48, 100, 257, 4096, 16384)}
    assert moved == {3: 4, 4: 8, 16: 32, 48: 32, 100: 4, 257: 16, 4096: 256, 16384: 1024}


def test_why_none_could_be_derived():
    tied = MATMUL.replace("return [hidden]", "return [hidden, M, K]")
    assert size_check_sizes(tied).overrides == {}
    assert size_check_sizes(tied).why.startswith("no module-level integer constant")
    assert size_check_sizes("def get_inputs(:\n").why.startswith("the problem's module constants cannot be read")


def test_the_verifier_derives_unless_given_or_turned_off(tmp_path):
    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache")
    (alt,), note = alternatives_to_judge(MATMUL, (), config)
    # beside the build cache, never in it: workers running candidate code write there, and the reference imports this
    assert alt.label == "M=128, K=256" and alt.problem.parent == tmp_path / "cache-judge" / "derived"
    assert "M = 128" in alt.problem.read_text() and "K = 256" in alt.problem.read_text()
    assert note.startswith("derived sizes M=128, K=256")
    again, _ = alternatives_to_judge(MATMUL, (), config)  # one file per content
    assert again[0].problem == alt.problem and len(list((tmp_path / "cache-judge" / "derived").iterdir())) == 1
    given = [Alternative(label="mine", problem=tmp_path / "mine.py")]
    assert alternatives_to_judge(MATMUL, given, config) == (given, "1 alternative(s) given by the caller")
    off, note = alternatives_to_judge(MATMUL, (), config.model_copy(update={"derive_alt": False}))
    assert off == [] and "derive_alt is off" in note


def test_threads_deriving_the_same_problem_at_once_all_get_it(tmp_path):
    """`evaluate --concurrency` judges in threads of one process: two verdicts of one problem derive its file at once
    (CI, 2026-12-07: one thread's rename found its part file already renamed by the other, an infrastructure error)."""
    import threading

    config = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache")
    for round_ in range(20):
        source = MATMUL + f"# round {round_}\n"
        start, got, errors = threading.Barrier(8), [], []

        def derive(source=source, start=start, got=got, errors=errors):
            start.wait()
            try:
                got.append(alternatives_to_judge(source, (), config)[0][0].problem)
            except Exception as e:  # noqa: BLE001 - the failure is what the test reports
                errors.append(e)

        threads = [threading.Thread(target=derive) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, f"round {round_}: {errors[0]!r}"
        text = got[0].read_text()  # the whole derived source, not a half-written one
        assert len(set(got)) == 1 and "M = 128" in text and text.endswith(f"# round {round_}\n")
    derived = tmp_path / "cache-judge" / "derived"
    assert sorted(p.suffix for p in derived.iterdir()) == [".py"] * 20  # no part file left behind
