from __future__ import annotations

import os
import stat

import pytest

from ibfabric.results import write_atomic

def test_write_atomic_replaces_whole_file_with_normal_permissions(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    write_atomic(target, "first\n")
    write_atomic(target, "second\n")
    assert target.read_text() == "second\n"
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
    assert [p.name for p in target.parent.iterdir()] == ["out.txt"]  # no temporary file left

def test_write_atomic_leaves_the_old_file_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    write_atomic(target, "kept\n")

    with pytest.raises(TypeError):
        write_atomic(target, 42)  # cannot be written: nothing half-written, nothing left behind
    assert target.read_text() == "kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
