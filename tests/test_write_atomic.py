"""`paths.write_atomic`, the one atomic file write of the parent side (problem files, baselines, audit entries, the
header index, trajectories, scratch owner records): a reader sees the old file or the new one, writers at once each
keep their own part file, a failed write leaves the old file and no part, and nothing planted in the folder (a worker
writes into its scratch folder, where the owner record lives) redirects the write."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from kernelmosaic.paths import write_atomic


def test_the_new_text_replaces_the_old_and_is_owner_only(tmp_path):
    path = tmp_path / "entry.json"
    path.write_text("old")
    assert write_atomic(path, "new") == path
    assert path.read_text() == "new"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_part(tmp_path):
    path = tmp_path / "entry.json"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        write_atomic(path, "half \udc80 of it")  # a lone surrogate cannot be encoded: the write fails midway
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.json"]


def test_a_symlink_planted_where_a_fixed_part_name_would_be_is_not_followed(tmp_path):
    folder, outside = tmp_path / "scratch", tmp_path / "outside.txt"
    folder.mkdir()
    outside.write_text("untouched")
    for name in (".km.owner.tmp", ".km.owner.part", ".km.owner-.part"):  # names a fixed-name writer would use
        (folder / name).symlink_to(outside)
    write_atomic(folder / "km.owner", '{"owners": []}')
    assert outside.read_text() == "untouched"
    assert (folder / "km.owner").read_text() == '{"owners": []}' and not (folder / "km.owner").is_symlink()


def test_threads_writing_one_path_at_once_all_succeed_and_leave_one_whole_file(tmp_path):
    path, errors = tmp_path / "index", []
    texts = [f"{k:02d}" * 5000 for k in range(16)]

    def write(text: str) -> None:
        try:
            for _ in range(20):
                write_atomic(path, text)
        except OSError as exc:  # with one shared part name, one thread's rename takes another's part away
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert path.read_text() in texts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]
