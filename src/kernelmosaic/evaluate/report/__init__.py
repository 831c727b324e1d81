"""Reports of evaluation runs: HTML with embedded plots, summary.json and summary.md."""

from kernelmosaic.evaluate.report.writer import write_report

__all__ = ["write_report"]
