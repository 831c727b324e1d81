"""A real browser (Playwright driving Debian's Chromium) works through the review page by keyboard and
mouse; the store and the audit log are checked afterwards."""

from __future__ import annotations

import shutil

import pytest

from kernelmosaic.curate.review import accepted_task_ids
from kernelmosaic.curate.review.app import ServeConfig, create_app
from kernelmosaic.curate.review.auth import serving_token
from kernelmosaic.curate.review.build import build_board
from kernelmosaic.store.reviews import ReviewLog

from .conftest import review_tasks, running_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
pytestmark = pytest.mark.skipif(not shutil.which(CHROMIUM), reason="needs Debian's chromium (.ci/run installs it)")


def test_review_by_keyboard_and_buttons(store):
    tasks = review_tasks()
    board = build_board(tasks, ReviewLog(store))
    token = serving_token()
    with running_server(create_app(board, ServeConfig(token=token))) as url, playwright_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        stranger = browser.new_page()  # another local user, without the printed link
        assert stranger.goto(url + "/").status == 401
        assert stranger.request.post(url + "/tasks/t1_relu/decision",
                                     form={"decision": "accept", "reviewer": "mallory"}).status == 401
        page = browser.new_context().new_page()
        page.goto(f"{url}/?token={token}")  # the link `review serve` prints: the token moves into a cookie
        assert "token" not in page.url
        panel = page.locator("section.task")
        assert panel.get_attribute("data-task-id") == "t1_relu"
        page.fill("#reviewer", "alice")
        page.locator("h2").click()  # focus leaves the name field, so keys are shortcuts again

        page.keyboard.press("a")  # accept t1 with the keyboard
        page.wait_for_selector('section.task[data-task-id="t2_sigmoid"]')
        page.wait_for_function("document.activeElement.id !== 'reason'")
        assert "accept recorded for t1_relu" in page.inner_text("#flash")

        page.keyboard.press("r")  # reject t2: the key asks for a reason, Enter sends it
        assert page.evaluate("document.activeElement.id") == "reason"
        page.keyboard.type("same template as t1_relu")
        page.keyboard.press("Enter")
        page.wait_for_selector('section.task[data-task-id="t3_tanh"]')
        page.wait_for_function("document.activeElement.id !== 'reason'")  # focus leaves the box once settled

        page.keyboard.press("n")  # edit t3's description inline
        page.fill("#nl-edit", "Hyperbolic tangent of a float32 (64, 1024) tensor, elementwise.")
        page.click("#btn-save")
        page.wait_for_function("document.querySelector('#nl').innerText.startsWith('Hyperbolic')")

        page.keyboard.press("e")  # needs-edit without a reason, then the button: refused with a message
        page.locator("h2").click()
        page.click("#btn-needs-edit")
        page.wait_for_selector("#flash.error")
        assert "needs a reason" in page.inner_text("#flash")

        queue = page.inner_text("#queue")
        assert "accepted 1" in queue and "rejected 1" in queue
        page.goto(url + "/log")
        rows = page.locator("#log tbody tr")
        assert rows.count() == 3
        assert "same template as t1_relu" in page.inner_text("#log")
        browser.close()

    events = ReviewLog(store).events()
    assert [(e.task_id, e.kind, e.decision, e.reviewer) for e in events] == [
        ("t1_relu", "decision", "accept", "alice"), ("t2_sigmoid", "decision", "reject", "alice"),
        ("t3_tanh", "edit", None, "alice")]
    assert events[1].reason == "same template as t1_relu"
    assert events[2].changes["nl"].new.startswith("Hyperbolic tangent")
    gate = accepted_task_ids(store, [t.id for t in tasks], {t.id: t.hashes.reference for t in tasks})
    assert gate.reviewed and gate.allowed == ["t1_relu"] and gate.rejected == ["t2_sigmoid"]
    assert gate.pending == ["t3_tanh", "t4_row_sum"]
