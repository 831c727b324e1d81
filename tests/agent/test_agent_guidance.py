"""The guidance library (every item valid, retrieval by category, status and query) and the feedback formatting."""

from __future__ import annotations

import pytest

from kernelmosaic.agent.feedback import test_feedback as format_test_feedback
from kernelmosaic.agent.feedback import trim_compile_log
from kernelmosaic.agent.guidance import GuidanceError, GuidanceLibrary
from kernelmosaic.contracts.messages import ToolCall
from kernelmosaic.contracts.tool_specs import TOOL_NAMES, argument_error
from kernelmosaic.contracts.verdict import Status, Verdict
from kernelmosaic.tasks.schema import CATEGORIES

LIB = GuidanceLibrary.load()


def test_library_has_at_least_15_versioned_items_that_name_real_categories_and_statuses():
    assert len(LIB.items) >= 15
    statuses = {s.value for s in Status}
    for item in LIB.items.values():
        assert item.version >= 1 and 5 <= item.text.count("\n") + 1 <= 24
        assert set(item.applies_when.categories) <= set(CATEGORIES) | {"*"}, item.id
        assert set(item.applies_when.statuses) <= statuses, item.id
        assert item.applies_when.categories or item.applies_when.statuses, f"{item.id} is never retrieved automatically"


def test_every_failure_status_the_model_can_fix_has_advice():
    for status in ["compile_error", "load_error", "runtime_error", "cuda_error", "crash", "output_mismatch",
                   "shape_mismatch", "dtype_mismatch", "nondeterministic", "static_reject", "no_custom_kernel"]:
        assert LIB.for_status(status, "cuda") or LIB.for_status(status, "cpu"), status


def test_retrieval_by_category_status_and_query():
    assert [i.id for i in LIB.for_category("softmax", "cuda")][0] == "safe-softmax"
    assert [i.id for i in LIB.for_category("gemm", "cuda")] == ["smem-tiling", "tensor-cores"]
    assert "cpu-candidates" in [i.id for i in LIB.for_category("gemm", "cpu")]
    assert all("cuda" in i.applies_when.devices for i in LIB.for_category("gemm", "cuda"))
    assert LIB.for_status("compile_error", "cuda")[0].id == "compile-errors"
    assert LIB.for_status("compile_error", "cuda", exclude={"compile-errors"}) == []
    assert LIB.lookup("bank conflicts", "cuda")[0].id == "smem-tiling"
    assert LIB.lookup("online softmax", "cuda")[0].id == "safe-softmax"
    assert LIB.lookup("welford", "cpu")[0].id == "welford"
    assert LIB.lookup("hopper", "cuda")[0].id == "hopper"
    assert LIB.lookup("zzz qqq", "cuda") == []


def test_malformed_item_is_reported_with_its_file(tmp_path):
    (tmp_path / "bad.md").write_text("+++\nid = \"bad\"\n+++\ntext\n")
    with pytest.raises(GuidanceError, match="bad.md"):
        GuidanceLibrary.load(tmp_path)


NINJA_LOG = """\
[1/2] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=ext -isystem /usr/include/torch -O2 -c /root/.cache/km/build/ext_9f/main.cpp -o main.o
FAILED: main.o
c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=ext -isystem /usr/include/torch -O2 -c /root/.cache/km/build/ext_9f/main.cpp -o main.o
In file included from /usr/include/torch/extension.h:5,
/root/.cache/km/build/ext_9f/main.cpp: In function 'at::Tensor relu(at::Tensor)':
/root/.cache/km/build/ext_9f/main.cpp:8:18: error: 'output' was not declared in this scope
    8 |     float* dst = output.data_ptr<float>();
      |                  ^~~~~~
/root/.cache/km/build/ext_9f/main.cpp:9:5: note: suggested alternative: 'out'
/tmp/b/cuda.cu(23): error: identifier "blockDimx" is undefined
ninja: build stopped: subcommand failed.
""" + "\n".join(f"/usr/include/torch/deep/header{i}.h:1: warning: noise" for i in range(5000))


def test_compile_log_is_trimmed_to_the_first_errors_with_file_and_line():
    out = trim_compile_log(NINJA_LOG)
    assert out.splitlines()[:3] == [
        "main.cpp:8:18: error: 'output' was not declared in this scope",
        "    8 |     float* dst = output.data_ptr<float>();",
        "      |                  ^~~~~~",
    ]
    assert 'cuda.cu(23): error: identifier "blockDimx" is undefined' in out
    assert "c++ -MMD" not in out and "[1/2]" not in out and "warning: noise" not in out
    assert len(out.splitlines()) <= 30


def test_test_feedback_shows_status_errors_mismatch_and_findings():
    verdict = {"accepted": False, "status": "output_mismatch", "message": "trial 2 differs",
               "correctness": {"trials": 5, "passed": 1, "max_abs_error": 0.5, "max_rel_error": 2.0, "atol": 1e-4,
                               "rtol": 1e-4, "detail": "index (3, 7): got 0.1, expected 0.6"},
               "findings": [{"rule": "torch-compute-in-forward", "severity": "flag", "message": "calls torch.add",
                             "evidence": "candidate.py:12"}]}
    text = format_test_feedback(Verdict.model_validate(verdict))
    assert text.startswith("FAILED (output_mismatch): trial 2 differs")
    assert "1/5 trials passed; max abs error 0.5" in text and "first mismatch: index (3, 7)" in text
    assert "finding flag torch-compute-in-forward: calls torch.add [candidate.py:12]" in text


def test_argument_errors():
    assert argument_error(ToolCall(id="a", name="test")) == ""
    assert "Unknown tool" in argument_error(ToolCall(id="a", name="bash"))
    assert "must be a string" in argument_error(ToolCall(id="a", name="write_candidate", arguments={"source": 3}))
    assert "unknown extra" in argument_error(ToolCall(id="a", name="test", arguments={"extra": 1}))
    assert set(TOOL_NAMES) == {"write_candidate", "compile", "test", "benchmark", "profile", "guidance", "submit"}
