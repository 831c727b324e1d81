"""At 80 columns the `runs` tables keep ids, names, times and statuses whole (a word split reads as two), leave the
model and task source of `runs list` to `runs show` and to wide terminals, and cut no cell with an ellipsis."""

from __future__ import annotations

from store_helpers import CANDIDATE, accepted_verdict, every_event_type
from typer.testing import CliRunner

from kernelmosaic.contracts.trajectory import Solution, Totals
from kernelmosaic.store import open_store
from kernelmosaic.store.cli import app

MODEL = "openai:Qwen/Qwen2.5-Coder-32B-Instruct-AWQ"
TASKS = ("l2_conv2d_batchnorm_relu_maxpool_fused", "l1_relu", "l3_transformer_block_with_rotary_embeddings")


def _fits(output: str) -> None:
    assert "…" not in output, output
    assert max(len(line) for line in output.splitlines()) <= 80, output


def _column(output: str, header: str, next_header: str) -> str:
    """The text of one column of a one-row table, its folded pieces joined."""
    lines = output.splitlines()
    top = next(i for i, line in enumerate(lines) if f" {header} " in line and f" {next_header} " in line)
    start, end = lines[top].index(f" {header} "), lines[top].index(f" {next_header} ")
    return "".join(line[start:end].strip() for line in lines[top + 2:])


def test_runs_list_and_show_fold_at_80_columns(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'km.db'}"
    with open_store(url) as store:
        run_id = store.create_run("first-hour-run-on-a-narrow-terminal", MODEL, "kernelbench:/data/KernelBench", {})
        for task_id in TASKS:
            episode = store.start_episode(run_id, task_id)
            for seq, event in enumerate(every_event_type()):
                store.append_event(episode.id, seq, event)
            sha = store.record_candidate(episode.id, CANDIDATE)
            best = Solution(source=CANDIDATE, candidate_sha256=sha, verdict=accepted_verdict(12.5), step=1)
            store.finish_episode(episode.id, "budget_exhausted", Totals(prompt_tokens=1234567, turns=30,
                                                                        cost_usd=12.3456, gpu_seconds=1234.5), best=best)
    listed = CliRunner().invoke(app, ["list", "--db", url], env={"COLUMNS": "80"})
    assert listed.exit_code == 0, listed.output
    _fits(listed.stdout)
    assert _column(listed.stdout, "name", "created") == "first-hour-run-on-a-narrow-terminal", "folded, whole"
    assert "running" in listed.stdout.split() and "100%" in listed.stdout.split(), listed.stdout
    wide = CliRunner().invoke(app, ["list", "--db", url], env={"COLUMNS": "160"})
    assert _column(wide.stdout, "model", "tasks") == MODEL, "whole on a wide terminal"
    shown = CliRunner().invoke(app, ["show", str(run_id), "--db", url], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    _fits(shown.stdout)
    assert "12.50x" in shown.stdout and "1234567" in shown.stdout and "12.3456" in shown.stdout
    words = set(shown.stdout.split())
    assert all(task in words for task in TASKS), shown.stdout  # task ids whole, never split inside a word


def test_an_interrupted_run_shows_its_unfinished_episodes_interrupted_and_long_ids_whole(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'km.db'}"
    long_id = "l1_adaptive_avgpool2d_with_padding_and_ceil_mode"
    with open_store(url) as store:
        run_id = store.create_run("interrupted-run", MODEL, "builtin", {})
        done = store.start_episode(run_id, long_id)
        store.finish_episode(done.id, "model_transient_error_after_retries", Totals(turns=3))
        store.start_episode(run_id, "l1_relu")  # in flight when the run was stopped
        store.finish_run(run_id, "interrupted")
    shown = CliRunner().invoke(app, ["show", str(run_id), "--db", url], env={"COLUMNS": "80"})
    assert shown.exit_code == 0, shown.output
    _fits(shown.stdout)
    assert long_id in shown.stdout.split(), shown.stdout  # whole, beside a long exit reason
    row = next(line for line in shown.stdout.splitlines() if " l1_relu " in f" {line} ")
    assert "interrupted" in row.split() and "running" not in row.split(), row
    assert "interrupted 1" in shown.stdout and "running 1" not in shown.stdout, shown.stdout
    assert "GPU not measured" in " ".join(shown.stdout.split()), shown.stdout  # no verdict ran on a GPU: not 0.0s
