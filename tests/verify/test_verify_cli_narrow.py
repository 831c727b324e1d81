"""The verdict summary's findings table folds at 80 columns: rule names and evidence are never cut."""

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
    rows = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    assert "".join(r[1].strip() for r in rows) == "torch-compute-in-forward-after-extension-call"
    assert "".join(r[5].strip() for r in rows).replace(" ", "") == EVIDENCE.replace(" ", "")
