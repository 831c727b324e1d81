"""The verdict summary's findings at 80 columns: a block per finding, no word, rule name or evidence split or cut; a
table from 120 columns."""

from __future__ import annotations

from rich.console import Console

from kernelmosaic.contracts.verdict import Correctness, Env, Finding, Status, Verdict
from kernelmosaic.verify.cli import _summary

EVIDENCE = "candidate.py:42: torch.nn.functional.scaled_dot_product_attention(q, k, v) inside ModelNew.forward"


def test_findings_table_folds_at_80_columns():
    verdict = Verdict(accepted=False, status=Status.static_reject, message="static check `torch-compute`",
                      findings=[Finding(rule="torch-compute-in-forward-after-extension-call", severity="reject",
                                        message="PyTorch computes in forward", evidence=EVIDENCE)],
                      correctness=Correctness(), env=Env(device="cpu"))
    console = Console(width=80, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the console
    _summary(verdict, explain=True, console=console)
    text = console.export_text()
    console.file.close()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80
    words = text.split()
    assert "torch-compute-in-forward-after-extension-call" in words  # the rule name whole
    assert EVIDENCE in " ".join(words), text  # every word of the evidence whole and in order (a split adds a space)


def test_findings_are_a_table_on_a_wide_terminal():
    verdict = Verdict(accepted=False, status=Status.static_reject, message="static check `torch-compute`",
                      findings=[Finding(rule="torch-compute", severity="reject", message="PyTorch computes in forward",
                                        evidence=EVIDENCE)],
                      correctness=Correctness(), env=Env(device="cpu"))
    console = Console(width=160, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 - closed with the console
    _summary(verdict, explain=True, console=console)
    text = console.export_text()
    console.file.close()
    rows = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    assert " rule " in text and rows and rows[0][1].strip() == "torch-compute" and rows[0][2].strip() == "reject"
