"""The wall-clock burst's inputs and per-call projections (`kmworker/burst_inputs.py`, issue 36): no two calls of a
burst share their inputs where an argument can move, the structure a problem's inputs show survives, every process
rebuilds the same calls from the seed, and a call's projection is the fingerprint the reference computes for it."""

from __future__ import annotations

import math

import pytest
import torch

from kernelmosaic.verify.call_checks import projection_mismatch
from kernelmosaic.verify.sandbox.kmworker.burst_inputs import (
    MAX_OUTPUTS,
    SPLIT,
    STEP_BYTES,
    BurstInputs,
    CallPrinter,
    windowable,
)
from kernelmosaic.verify.sandbox.kmworker.fingerprint import Fingerprinter
from kernelmosaic.verify.sandbox.kmworker.inputs import InputTemplate


def _template(*inputs) -> InputTemplate:
    torch.manual_seed(0)
    return InputTemplate(list(inputs))


def test_arguments_whose_elements_are_independent_of_position_move_and_the_others_do_not():
    tri = torch.randn(64, 64).triu()
    sym = torch.randn(32, 32)
    sym = sym + sym.T
    probs = torch.softmax(torch.randn(16, 10), dim=1)
    t = _template(torch.randn(8, 64), tri, sym, probs, torch.randint(0, 10, (50,)), torch.rand(20) < 0.3, 3.5,
                  torch.rand(40).abs(), torch.randint(1, 4, (30,)).float(), torch.randint(0, 2, (30,)).float())
    # a 0/1 mask held as floats has a zeros pattern, so it keeps its draws
    assert [windowable(s) for s in t.specs] == [True, False, False, False, True, True, False, True, True, False]


def test_no_two_calls_share_their_inputs_and_every_window_is_aligned():
    t = _template(torch.randn(128, 96), torch.randn(96, 64))
    burst = BurstInputs(t, "cpu", seed=11, sets=4)
    assert burst.distinct
    seen = set()
    for k in range(400):
        a, b = burst.call(k)
        assert a.shape == (128, 96) and b.shape == (96, 64) and a.is_contiguous() and b.is_contiguous()
        # as aligned as a fresh allocation: offsets in steps of 256 bytes from a buffer the allocator placed
        assert (a.storage_offset() * 4) % STEP_BYTES == 0 and (b.storage_offset() * 4) % STEP_BYTES == 0
        assert a.data_ptr() % 64 == 0 and b.data_ptr() % 64 == 0
        seen.add((a.data_ptr(), b.data_ptr()))
    assert len(seen) == 400  # every call its own pair of windows: a memo keyed on the inputs never hits


def test_every_process_rebuilds_the_same_call_from_the_seed():
    t = _template(torch.randn(33, 17), torch.randint(-5, 5, (7,)))
    one, two = BurstInputs(t, "cpu", 5, 4), BurstInputs(t, "cpu", 5, 4)
    other = BurstInputs(t, "cpu", 6, 4)
    for k in (0, 1, 37, 999):
        for x, y in zip(one.call(k), two.call(k), strict=True):
            assert torch.equal(x, y)
        assert not torch.equal(one.call(k)[0], other.call(k)[0])


def test_windows_keep_what_the_problem_shows_of_its_elements():
    nonneg = torch.rand(256) * 3
    counts = torch.randint(0, 5, (64,)).float()
    index = torch.randint(0, 10, (100,))
    t = _template(nonneg, counts, index)
    burst = BurstInputs(t, "cpu", 3, 4)
    for k in range(50):
        x, c, i = burst.call(k)
        assert bool((x >= 0).all())
        assert torch.equal(c, c.round()) and bool((c >= 0).all()) and bool((c <= 4).all())
        assert i.dtype == torch.int64 and int(i.min()) >= 0 and int(i.max()) <= 9


def test_positional_structure_keeps_its_draws_and_a_problem_made_only_of_it_says_so():
    tri = torch.randn(48, 48).tril()
    burst = BurstInputs(_template(tri, tri.clone()), "cpu", 9, 4)
    assert not burst.distinct
    for k in range(8):
        a, b = burst.call(k)
        assert torch.equal(a, a.tril()) and torch.equal(b, b.tril())  # the zero half stays zero
        assert torch.equal(a, burst.call(k + 4)[0])  # four draws in turn
    mixed = BurstInputs(_template(tri, torch.randn(48, 8)), "cpu", 9, 4)
    assert mixed.distinct and torch.equal(mixed.call(1)[0], mixed.call(1)[0].tril())


def test_a_calls_projection_is_the_references_fingerprint_and_a_stale_one_is_not():
    t = _template(torch.randn(64, 32), torch.randn(32, 48))
    burst = BurstInputs(t, "cpu", 21, 4)
    printer = CallPrinter(fp_seed=77, device="cpu", calls=6)
    outs = [torch.mm(*burst.call(k)) for k in range(6)]
    for k, out in enumerate(outs):
        printer(k, out if k != 4 else outs[3])  # call 4 answered with call 3's result
    rows = printer.values()
    want = [Fingerprinter(77, "cpu")(out, moments=True) for out in outs]
    for k in (0, 1, 2, 3, 5):
        assert math.isclose(rows[k][0], want[k][1]["dot"], rel_tol=1e-5)  # float32 projection, float64 fingerprint
        assert projection_mismatch(rows[k], want[k], 1e-5, 1e-5, [0.0]) == ""
    assert "projection" in projection_mismatch(rows[4], want[4], 1e-5, 1e-5, [0.0])


def test_integer_outputs_are_projected_exactly():
    printer = CallPrinter(fp_seed=8, device="cpu", calls=2)
    idx = torch.randint(0, 1000, (1000,))
    printer(0, idx)
    printer(1, idx + 1)
    rows = printer.values()
    want = Fingerprinter(8, "cpu")(idx, moments=True)
    assert projection_mismatch(rows[0], want, 0.0, 0.0, [0.0]) == ""
    assert projection_mismatch(rows[1], want, 0.0, 0.0, [0.0])  # off by one everywhere


def test_nan_outputs_tuples_and_missing_outputs_are_projected_as_such():
    printer = CallPrinter(fp_seed=3, device="cpu", calls=3)
    good = (torch.randn(10), torch.arange(6))
    printer(0, good)
    printer(1, (torch.tensor([1.0, float("nan")]), torch.arange(6)))
    printer(2, torch.randn(10))  # one output where the first call gave two
    rows = printer.values()
    want = Fingerprinter(3, "cpu")(good, moments=True)
    assert projection_mismatch(rows[0], want, 1e-5, 1e-5, [0.0, 0.0]) == ""
    assert not math.isfinite(rows[1][0])
    assert "NaN or inf" in projection_mismatch(rows[1], want, 1e-5, 1e-5, [0.0, 0.0])
    assert math.isnan(rows[2][1]) and projection_mismatch(rows[2], want, 1e-5, 1e-5, [0.0, 0.0])
    nan_ref = Fingerprinter(3, "cpu")((torch.tensor([1.0, float("nan")]), torch.arange(6)), moments=True)
    assert projection_mismatch(rows[1], nan_ref, 1e-5, 1e-5, [0.0, 0.0]) == ""  # NaN where the reference has NaN


@pytest.mark.parametrize("split", [False, True])
def test_outputs_past_the_rows_width_are_summed_into_its_last_column(split):
    """A call with more than `MAX_OUTPUTS` outputs: every one of them answers in its row (the last column sums the
    rest), an integer and a NaN-holding output among them; one left zero, or one output fewer, does not pass."""
    n = MAX_OUTPUTS + 4
    outs = [torch.randn(50) * (k + 1) for k in range(n)]
    outs[MAX_OUTPUTS + 1] = torch.arange(7)
    if split:
        outs[MAX_OUTPUTS + 2][3] = float("nan")
    printer = CallPrinter(fp_seed=5, device="cpu", calls=3, split=split)
    printer(0, tuple(outs))
    printer(1, tuple(o if k != n - 1 else torch.zeros_like(o) for k, o in enumerate(outs)))
    printer(2, tuple(outs[:-1]))
    rows = printer.values()
    assert len(rows[0]) == MAX_OUTPUTS * (SPLIT if split else 1)
    want = Fingerprinter(5, "cpu")(tuple(outs), moments=True)
    extra = [0.0] * n
    assert projection_mismatch(rows[0], want, 1e-5, 1e-5, extra, split=split) == ""
    assert f"outputs {MAX_OUTPUTS - 1}-{n - 1} (summed)" in projection_mismatch(rows[1], want, 1e-5, 1e-5, extra,
                                                                            split=split)
    assert projection_mismatch(rows[2], want, 1e-5, 1e-5, extra, split=split)
