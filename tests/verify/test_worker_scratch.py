"""A worker's scratch directory is removed when the worker ends, unless `keep_scratch` asks to keep it."""

from __future__ import annotations

from kernelmosaic.verify.pool import Worker, WorkerLimits


def test_scratch_removed_on_close_and_output_tail_survives(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path)
    worker.start()
    worker.log_path.write_text("last words of the worker\n")  # the worker's own log, as a crash would leave it
    worker.close()
    assert not worker.scratch.exists() and list(tmp_path.iterdir()) == []
    assert "last words of the worker" in worker.output_tail()


def test_scratch_kept_when_asked(tmp_path):
    worker = Worker("candidate", "cpu", WorkerLimits(), scratch_root=tmp_path, keep_scratch=True)
    worker.start()
    worker.kill()
    assert worker.scratch.is_dir() and worker.scratch.parent == tmp_path


def test_a_worker_that_never_started_leaves_nothing(tmp_path):
    Worker("compile", "cpu", WorkerLimits(), scratch_root=tmp_path).kill()
    assert list(tmp_path.iterdir()) == []
