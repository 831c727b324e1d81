"""One real evaluation per mode for the whole session (CPU verifier, C++ candidates), shared by the tests that read it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from eval_cli import invoke, run_id_of
from eval_kit import (
    BROKEN,
    GOOD_FUSED,
    GOOD_RELU,
    NOTAIL_SCALE,
    TINY,
    WRONG_RELU,
    make_tasks,
    problem,
    tool_call,
    write_call,
)

from kernelmosaic.models.scripted import register_script

ONE_SHOT = {"ev_relu": GOOD_RELU, "ev_relu__s1": WRONG_RELU, "ev_scale": NOTAIL_SCALE, "ev_scale__s1": BROKEN,
            "ev_fused": GOOD_FUSED, "ev_fused__s1": GOOD_FUSED, "ev_tiny": TINY, "ev_tiny__s1": TINY}
"""What the scripted model writes for each episode (task id, sample suffix) of the one-shot run."""


def _one_shot_reply(messages):
    task_id = re.search(r"# Task (\S+):", messages[1].content).group(1)
    return write_call(ONE_SHOT[task_id], f"call_{task_id}")


register_script("evalkit-oneshot", lambda: [_one_shot_reply])
register_script("evalkit-agent", lambda: [write_call(WRONG_RELU, "a1"), tool_call("test", "a2"),
                                          write_call(GOOD_RELU, "a3"), tool_call("benchmark", "a4"),
                                          tool_call("submit", "a5")])


class Session:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.db = f"sqlite:///{root / 'km.db'}"
        self.tasks = make_tasks(root / "tasks")
        self.runs = root / "runs"
        self.output: dict[int, str] = {}
        """What each run's command printed (captured: not a terminal)."""

    def evaluate(self, *args: str) -> int:
        output = invoke("evaluate", *args, "--device", "cpu", "--db", self.db, "--out", str(self.runs),
                        "--concurrency", "2")
        self.output[run_id_of(output)] = output
        return run_id_of(output)


@pytest.fixture(scope="session")
def session(tmp_path_factory) -> Session:
    return Session(tmp_path_factory.mktemp("evaluate"))


@pytest.fixture(scope="session")
def one_shot_run(session) -> int:
    return session.evaluate("--model", "scripted:evalkit-oneshot", "--tasks", str(session.tasks), "--samples", "2")


@pytest.fixture(scope="session")
def kernelbench(session) -> tuple[Path, Path]:
    """Our own tiny problems in KernelBench's checkout layout, and generations in its runs layout."""
    bench = session.root / "kb" / "KernelBench"
    (bench / "level1").mkdir(parents=True)
    (bench / "level2").mkdir(parents=True)
    (bench / "level1" / "1_Tiny_ReLU.py").write_text(problem("torch.relu(x)"))
    (bench / "level2" / "1_Tiny_ReLU_Scale.py").write_text(problem("torch.relu(x) * 2.0"))
    gens = session.root / "gens"
    for rel, source in (("level_1/problem_1/sample_0/kernel.py", GOOD_RELU),
                        ("level_1/problem_1/sample_1/kernel.py", WRONG_RELU),
                        ("level_2/problem_1/sample_0/kernel.py", GOOD_FUSED)):
        (gens / rel).parent.mkdir(parents=True, exist_ok=True)
        (gens / rel).write_text(source)
    return bench.parent, gens


@pytest.fixture(scope="session")
def generations_run(session, kernelbench) -> int:
    checkout, gens = kernelbench
    return session.evaluate("--generations", str(gens), "--tasks", f"kernelbench:{checkout}", "--seeds", "2",
                            "--set", "verify.trials=3")
