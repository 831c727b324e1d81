"""The report renders in headless Chromium (Playwright driving Debian's /usr/bin/chromium): plots decode, the per-task
table sorts, links resolve, and `--compare` shows both runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from eval_cli import invoke

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def test_compare_report_renders_with_plots_and_sortable_table(session, one_shot_run, generations_run):
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    out = session.root / "compare-report"
    invoke("report", str(one_shot_run), "--compare", str(generations_run), "--db", session.db, "--out", str(out))
    data = json.loads((out / "summary.json").read_text())
    assert [r["run"]["id"] for r in data["runs"]] == [one_shot_run, generations_run]
    assert f"run {one_shot_run}" in (out / "summary.md").read_text() and f"run {generations_run}" in (out / "summary.md").read_text()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto((out / "report.html").as_uri())
        images = page.eval_on_selector_all("img", "els => els.map(e => [e.complete, e.naturalWidth])")
        assert len(images) == 6 and all(done and width > 100 for done, width in images)
        headers = page.eval_on_selector_all("#gates-table th", "els => els.map(e => e.textContent)")
        assert headers == ["metric", f"run {one_shot_run}", f"run {generations_run}"]
        table = f"#tasks-{one_shot_run}"
        assert page.locator(f"{table} tbody tr").count() == data["runs"][0]["overall"]["episodes"]
        column = 6  # speedup eager: "1.042", "0.868 (unreliable)" (sorts by its number) or "not measured"
        cells = f"rows => rows.map(r => r.cells[{column}].textContent)"

        def numbers(texts: list[str]) -> list[float]:
            return [float(t.split()[0]) for t in texts if t != "not measured"]

        page.click(f"{table} th >> nth={column}")
        up = page.eval_on_selector_all(f"{table} tbody tr", cells)
        assert numbers(up) and numbers(up) == sorted(numbers(up))
        page.click(f"{table} th >> nth={column}")
        down = page.eval_on_selector_all(f"{table} tbody tr", cells)
        assert numbers(down) == sorted(numbers(up), reverse=True) and sorted(down) == sorted(up)
        links = page.eval_on_selector_all(f"{table} a", "els => els.map(e => e.getAttribute('href'))")
        assert links and all((out / link).is_file() for link in links)
        assert page.locator(f"#tasks-{generations_run} tbody tr").count() == 3
        browser.close()
