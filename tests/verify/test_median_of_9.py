"""The oracle's elementwise median of nine (kmworker.oracle.median_of_9) against torch's own median."""

from __future__ import annotations

import pytest
import torch

from kernelmosaic.verify.sandbox.kmworker.oracle import median_of_9


@pytest.mark.parametrize("seed", range(20))
def test_equals_torch_median_on_random_and_tied_values(seed):
    gen = torch.Generator().manual_seed(seed)
    xs = [torch.randn(4097, generator=gen, dtype=torch.float64).abs() for _ in range(9)]
    if seed % 2:  # ties: values drawn from a handful
        xs = [torch.randint(0, 4, (4097,), generator=gen).double() for _ in range(9)]
    want = torch.stack(xs).median(dim=0).values
    assert torch.equal(median_of_9(xs), want)


def test_every_order_of_nine_distinct_values():
    values = torch.arange(9.0)
    perms = torch.stack([torch.randperm(9, generator=torch.Generator().manual_seed(s)) for s in range(2000)])
    xs = [values[perms[:, k]] for k in range(9)]  # column k: the k-th value of each of 2000 orders
    assert torch.equal(median_of_9([x.clone() for x in xs]), torch.full((2000,), 4.0))


def test_refuses_other_counts():
    with pytest.raises(ValueError):
        median_of_9([torch.zeros(3)] * 8)
