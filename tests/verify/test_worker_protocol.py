"""The parent/worker protocol: a reply's payload is returned alone, so it validates into the typed verdict parts."""

from __future__ import annotations

import pytest

from kernelmosaic.contracts.verdict import Census
from kernelmosaic.verify.pool import Worker, WorkerError, WorkerLimits


@pytest.fixture
def worker():
    w = Worker("candidate", "cpu", WorkerLimits())
    w.start()
    yield w
    w.kill()


def test_reply_payload_has_no_protocol_keys_and_validates_as_census(worker):
    reply = worker.call("census", 30.0, host_inputs=[])
    assert "ok" not in reply and "error" not in reply
    census = Census.model_validate(reply)  # extra keys are forbidden: an envelope key would fail here
    assert (census.custom, census.library, census.kernels) == (-1, -1, [])


def test_an_unknown_op_is_a_worker_error_and_the_worker_keeps_serving(worker):
    with pytest.raises(WorkerError):
        worker.call("no_such_op", 30.0)
    assert Census.model_validate(worker.call("census", 30.0, host_inputs=[])).custom == -1
