"""Progress on screen: `verify`'s phase line follows the worker requests (their DEBUG records) and leaves the logging
as it found it; long commands print one line per finished item where the console is not a terminal."""

from __future__ import annotations

import io
import logging

from rich.console import Console

from kernelmosaic.contracts.verdict import Stat, Timing
from kernelmosaic.verify.pool import calls_log
from kernelmosaic.verify.progress import DoneLines, phase_progress, speed_detail, time_line


def test_the_line_names_the_phase_and_logging_is_restored():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    before = (calls_log.level, calls_log.propagate, list(calls_log.handlers))
    with phase_progress(console, "verifying c.py on cpu"):
        calls_log.debug("candidate %s", "run")
        calls_log.debug("reference %s", "no_such_op")
    text = out.getvalue()
    assert "verifying c.py on cpu: checking correctness" in text
    assert "verifying c.py on cpu: no_such_op" in text, "an op without a name shows as itself"
    assert (calls_log.level, calls_log.propagate, list(calls_log.handlers)) == before
    assert not calls_log.isEnabledFor(logging.DEBUG) or logging.getLogger().isEnabledFor(logging.DEBUG)


def test_a_plain_line_per_phase_change_where_the_console_is_not_a_terminal():
    """Piped or logged, a verification of minutes says what it is doing: one line each time the phase changes (no
    spinner, no control characters), none for a request of the same phase."""
    out = io.StringIO()
    with phase_progress(Console(file=out, force_terminal=False, width=40), "verifying c.py on cpu"):
        calls_log.debug("candidate load")
        calls_log.debug("candidate run")
        calls_log.debug("candidate refill")
        calls_log.debug("candidate time")
        calls_log.debug("candidate burst")  # timing still: no new line
    lines = out.getvalue().splitlines()
    assert [line.rsplit(" (", 1)[0] for line in lines] == [
        "verifying c.py on cpu: checking and building the candidate", "verifying c.py on cpu: loading the candidate",
        "verifying c.py on cpu: checking correctness", "verifying c.py on cpu: checking correctness on refilled buffers",
        "verifying c.py on cpu: timing"], lines
    assert all(line.endswith(" s)") for line in lines) and "\x1b" not in out.getvalue()


def test_done_lines_one_per_finished_item_where_not_a_terminal():
    out = io.StringIO()
    lines = DoneLines(Console(file=out, force_terminal=False, width=40), total=4, done=1)
    lines.say("level1/problem_3/sample_0", "accepted", 18.44, "1.60x vs eager")
    lines.skip()  # finished before a resume: counted, no line
    lines.say("p2/candidate", "output_mismatch", 3.0, "max abs error 1.5\n  at index 7 " + "x" * 300)
    text = out.getvalue().splitlines()
    assert text[0] == "[2/4] level1/problem_3/sample_0  accepted  18.4 s  (1.60x vs eager)"  # no wrap at width 40
    assert text[1].startswith("[4/4] p2/candidate  output_mismatch  3.0 s  (max abs error 1.5 at index 7 xxx")
    assert text[1].endswith("...)") and len(text) == 2


def test_done_lines_leave_a_terminal_to_the_live_display():
    out = io.StringIO()
    DoneLines(Console(file=out, force_terminal=True), total=1).say("t", "accepted", 1.0)
    assert out.getvalue() == ""


def test_a_done_line_can_say_where_the_time_went_on_a_second_line():
    out = io.StringIO()
    lines = DoneLines(Console(file=out, force_terminal=False, width=40), total=1)
    phases = {"judge": 8.14, "sanitize": 21.0, "timing": 4.2, "compare": 0.2, "sanitize_lock_wait": 3.05}
    lines.say("kb_l1_1_relu", "accepted", 40.0, "1.01x vs eager", time_line(phases))
    text = out.getvalue().splitlines()
    assert text == ["[1/1] kb_l1_1_relu  accepted  40.0 s  (1.01x vs eager)",
                    "    time: sanitize 21.0 s, judge 8.1 s, timing 4.2 s, sanitize_lock_wait 3.0 s"]
    assert time_line({"compare": 0.1}) == "", "phases under half a second are left out"


def test_speed_detail_gives_both_medians_on_device_and_host_time():
    def stat(ms: float) -> Stat:
        return Stat(median_ms=ms, q1_ms=ms, q3_ms=ms, samples=10)

    timing = Timing(candidate=stat(0.0612), eager=stat(0.0305), speedup_vs_eager=0.0305 / 0.0612, timer="cuda_events",
                    candidate_host=stat(0.08), eager_host=stat(0.05))
    assert speed_detail(timing) == "0.50x vs eager (0.0612 / 0.0305 ms device; host 0.08 / 0.05 ms)"
    assert speed_detail(None) == "untimed"
    timing.lead_short_calls, timing.lead_short_calls_eager = 40, 2
    assert speed_detail(timing).endswith("; calls past the lead 40 / 2)")
    on_cpu = Timing(candidate=stat(2.0), eager=stat(1.0), speedup_vs_eager=0.5, timer="host",
                    candidate_host=stat(2.0), eager_host=stat(1.0))
    assert speed_detail(on_cpu) == "0.50x vs eager (2 / 1 ms)", "the CPU's one host time is no device time"


def test_every_worker_request_has_a_name_a_person_reads():
    """The progress line shows what a worker request means (`PHASES`); an op missing there showed as its internal
    name (`burst_release`). Every public op of the candidate and reference roles has one."""
    from kernelmosaic.verify.progress import PHASES
    from kernelmosaic.verify.sandbox.kmworker.candidate import CandidateRole
    from kernelmosaic.verify.sandbox.kmworker.reference import ReferenceRole

    ops = {name for role in (CandidateRole, ReferenceRole) for name in dir(role)
           if not name.startswith("_") and callable(getattr(role, name))}
    assert ops and not ops - set(PHASES), sorted(ops - set(PHASES))
