"""Record the demonstration episodes with the real verifier on CPU and write the bundled replay file.

The assistant turns are hand-written (below), not a model's, and the file says so (`origin_model`); every tool
result, verdict and timing in it comes from running them, and a replay judges every candidate again. Run: `python -m kernelmosaic.agent.demo.record [OUT.jsonl]`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import tempfile
from pathlib import Path

from kernelmosaic.agent.config import AgentConfig
from kernelmosaic.agent.demo.kernels import ABS, RELU, RELU_BROKEN, SQUARED_DIFFERENCE
from kernelmosaic.agent.runner import GenerateConfig, run_tasks, select_tasks
from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.models.scripted import ScriptedModel
from kernelmosaic.verify.verifier_set import VerifierSet

__all__ = ["DEMO_TASKS", "demo_turns", "DemoModel", "record"]

DEMO_TASKS = ["l1_relu", "l1_abs", "l1_squared_difference"]
_ids = itertools.count(1)


def _turn(text: str, name: str, **arguments: str) -> Message:
    call = ToolCall(id=f"call_{next(_ids):03d}", name=name, arguments=arguments, raw_arguments=json.dumps(arguments))
    return Message(role="assistant", content=text, tool_calls=[call])


def demo_turns(task_id: str) -> list[Message]:
    """The authored assistant side of each demonstration episode."""
    if task_id == "l1_relu":
        return [
            _turn("ReLU is memory-bound: one pass over x, one write. A C++ loop over the raw float pointers, "
                  "output allocated with empty_like.", "write_candidate", source=RELU_BROKEN),
            _turn("Build it first.", "compile"),
            _turn("g++ says `output` is not declared: the tensor is named `out`. Fixing that line.",
                  "write_candidate", source=RELU),
            _turn("It should build now; check correctness.", "test"),
            _turn("Correct on every trial. Measure it against eager PyTorch.", "benchmark"),
            _turn("The loop is already a single streaming pass; at this size there is nothing left to fuse. Submitting.",
                  "submit"),
        ]
    if task_id == "l1_abs":
        return [
            _turn("Elementwise |x|: one contiguous pass with std::fabs.", "write_candidate", source=ABS),
            _turn("Test it.", "test"),
            _turn("Passed; a single pass is the whole job for abs. Submitting.", "submit"),
        ]
    if task_id == "l1_squared_difference":
        return [
            _turn("Fuse the subtraction and the square into one pass so (x - y) is never written to memory.",
                  "write_candidate", source=SQUARED_DIFFERENCE),
            _turn("Test it.", "test"),
            _turn("Passed. Submitting the fused kernel.", "submit"),
        ]
    raise KeyError(f"no demonstration for task {task_id!r}")


class DemoModel:
    """A scripted backend that plays each task's own demonstration (hand-written turns, not a model's)."""

    name = "scripted:kernelmosaic-demo"
    origin_model = "hand-written demonstration (kernelmosaic.agent.demo)"

    def for_task(self, task_id: str) -> ScriptedModel:
        model = ScriptedModel(demo_turns(task_id), name=self.name)
        model.origin_model = self.origin_model
        return model

    async def complete(self, messages, tools):  # pragma: no cover - episodes always use for_task
        raise RuntimeError("DemoModel serves episodes through for_task")


def record(out: Path) -> int:
    """Run the demonstrations and write their trajectories, one JSON object per line, to `out`."""
    from kernelmosaic.store import open_store
    from kernelmosaic.tasks import load_tasks

    with tempfile.TemporaryDirectory() as tmp:
        config = GenerateConfig(tasks="builtin", model=DemoModel.name, task_ids=DEMO_TASKS, concurrency=2,
                                out_dir=Path(tmp) / "runs", agent=AgentConfig(device="cpu"), compile_baseline=False)
        tasks = select_tasks(load_tasks("builtin"), DEMO_TASKS, 0)
        with open_store(f"sqlite:///{tmp}/demo.db") as store, \
                VerifierSet(config.verify_config()) as verifiers:
            run_id = store.create_run("demo", config.model, config.tasks, config)
            infos = asyncio.run(run_tasks(tasks, store=store, verifier_for=verifiers, backend=DemoModel(),
                                          run_id=run_id, config=config))
            trajectories = [store.load_trajectory(info.id) for info in infos]
    # Only complete demonstrations ship: each must end submitted with a verified solution.
    broken = [f"{t.task_id}: {t.exit_reason}" for t in trajectories
              if t.exit_reason != "submitted" or t.best is None or not t.best.verified]
    if broken:
        raise RuntimeError(f"demonstrations did not verify, nothing written: {'; '.join(broken)}")
    lines = [t.model_dump_json(by_alias=True) for t in trajectories]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


if __name__ == "__main__":
    from kernelmosaic.models.replay import bundled_path

    target = Path(sys.argv[1]) if len(sys.argv) > 1 else bundled_path()
    print(f"wrote {record(target)} trajectories to {target}")
