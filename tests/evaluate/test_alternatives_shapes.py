"""Evaluation's alternative shapes move the sizes the verifier actually judges: on the CPU a task's small form
(`problem_shapes.problem_at_shapes`), not its full sizes, which took 76 of a bundled pair's 89 s (a fresh-clone
trial, `evaluate --generations` on the CPU)."""

from __future__ import annotations

from kernelmosaic.evaluate.harness import alternatives_for
from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.problem_shapes import problem_at_shapes
from tests.verify import kit


def _task_folder(root, small):
    folder = root / "tasks" / "t_add_relu"
    folder.mkdir(parents=True)
    kit.write(folder, "reference.py", kit.PROBLEM_ADD_RELU.replace("n = 4096", "n = 1 << 22"))
    (folder / "task.toml").write_text(
        'schema = "kernelmosaic.task/1"\nid = "t_add_relu"\ntitle = "Add then ReLU"\nlevel = 1\n'
        'category = "elementwise"\ndtype = "fp32"\nnl = "y = relu(a + b) elementwise over n float32 values."\n'
        f"[shapes]\nsmall = {{ n = {small} }}\n")
    return folder / "reference.py"


def test_alternatives_move_the_small_sizes_judged_on_the_cpu(tmp_path):
    problem = _task_folder(tmp_path, small=512)
    cpu = VerifyConfig(device="cpu", cache_dir=tmp_path / "cache")
    judged = problem_at_shapes(problem, cpu).path
    assert judged != problem
    [small_alt] = alternatives_for(problem, judged)
    n = int(small_alt.label.split("=")[1])
    assert n < 1024, f"derived from the small form (n=512): {small_alt.label}"
    assert small_alt.problem.parent == problem.parent  # beside the problem, where the reference reads it
    [full_alt] = alternatives_for(problem)  # no judged form given: the problem's own sizes
    assert int(full_alt.label.split("=")[1]) > 1 << 20
