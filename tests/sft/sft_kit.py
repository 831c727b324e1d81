"""Real episodes for the SFT tests: a scripted model, the real CPU verifier, real C++ builds, a SQLite store.

One extension source serves every working candidate (they differ in the function `forward` calls), so the
verifier's content-keyed build cache builds it once.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

from cpp_kit import candidate as cpp_candidate
from cpp_kit import problem

from kernelmosaic.agent import AgentConfig, GenerateConfig, run_tasks
from kernelmosaic.contracts.messages import Message, ToolCall
from kernelmosaic.models.scripted import ScriptedModel
from kernelmosaic.store import Store
from kernelmosaic.tasks.schema import Forms, Shapes, Task
from kernelmosaic.verify import Verifier, VerifyConfig

PROBLEM = problem("torch.nn.functional.leaky_relu(x, 0.125)", n=4096)

CPP = r"""
torch::Tensor leaky_basic(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = src[i] > 0.f ? src[i] : 0.125f * src[i];
    return out;
}

torch::Tensor leaky_wrong(torch::Tensor x) {
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) dst[i] = src[i] > 0.f ? src[i] : 0.f;
    return out;
}

"""

BROKEN_CPP = r"""
torch::Tensor leaky_basic(torch::Tensor x) {
    auto out = torch::empty_like(x);
    float* dst = out.data_ptr<float>();
    for (int64_t i = 0; i < x.numel(); ++i) dst[i] = src[i];
    return out;
}
"""


def candidate(function: str, cpp: str = CPP, functions: tuple[str, ...] = ("leaky_basic", "leaky_wrong")) -> str:
    return cpp_candidate("km_sft_leaky", cpp, functions, f"{function}(x)")


BROKEN = candidate("leaky_basic", BROKEN_CPP, ("leaky_basic",))
WRONG, GOOD = candidate("leaky_wrong"), candidate("leaky_basic")
_ids = itertools.count()


def reply(*calls: tuple[str, dict], content: str = "", reasoning: str = "") -> Message:
    tool_calls = [ToolCall(id=f"call_sft_{next(_ids)}", name=name, arguments=args, raw_arguments=json.dumps(args))
                  for name, args in calls]
    return Message(role="assistant", content=content, reasoning=reasoning, tool_calls=tool_calls)


def solved_script() -> list[Message]:
    """Broken build, wrong answer, correct (untimed), timed -> verified, then submit with a call after it."""
    return [
        reply(("write_candidate", {"source": BROKEN}), ("compile", {}), content="A first kernel.",
              reasoning="Leaky ReLU is elementwise: one loop over the elements."),
        reply(("write_candidate", {"source": WRONG}), ("test", {}), reasoning="The build failed: src is undeclared."),
        reply(("write_candidate", {"source": GOOD}), ("test", {}), content="Fix the negative slope."),
        reply(("benchmark", {})),
        reply(("submit", {}), ("test", {}), content="Fast enough; submit.", reasoning="1.x speedup on this CPU."),
    ]


def unsolved_script() -> list[Message]:
    # Submits with nothing passing, then the script runs out: a finished episode without a verified solution.
    return [reply(("write_candidate", {"source": WRONG}), ("submit", {}))]


class RecordingModel(ScriptedModel):
    """The scripted model, kept as the one instance of its episode so the test can read what it was sent."""

    def for_task(self, task_id: str) -> RecordingModel:
        return self


def make_task(task_id: str) -> Task:
    return Task(id=task_id, title="Leaky ReLU", level=1, category="activation", tags=["leaky_relu"],
                forms=Forms(nl="Apply leaky ReLU with slope 0.125 elementwise to x of shape (n,).", reference=PROBLEM),
                shapes=Shapes(small={"n": 1000}))


def record_episodes(store: Store, out_dir: Path) -> tuple[int, dict[str, RecordingModel]]:
    """One run with a solved episode (`sft_leaky`) and an unsolved one (`sft_unsolved`); returns (run id, models)."""
    config = GenerateConfig(tasks="inline", model="scripted:sft", out_dir=out_dir, agent=AgentConfig(device="cpu"))
    run_id = store.create_run("sft", config.model, config.tasks, config)
    models = {"sft_leaky": RecordingModel(solved_script(), "scripted:sft"),
              "sft_unsolved": RecordingModel(unsolved_script(), "scripted:sft")}
    verify = VerifyConfig(device="cpu", trials=3, timing_budget_ms=20, timing_rounds=2, compile_baseline=False)
    with Verifier(verify) as verifier:
        for task_id, model in models.items():
            asyncio.run(run_tasks([make_task(task_id)], store=store, verifier_for=lambda _: verifier, backend=model,
                                  run_id=run_id, config=config))
    store.finish_run(run_id)
    return run_id, models
