"""A run's result files appear all together or not at all, even under SIGKILL."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from ibfabric.results import read_result_set, write_result_set

WRITER = r"""
import sys
from pathlib import Path
from ibfabric.results import write_result_set
out = Path(sys.argv[1])
i = 0
while True:
    files = {name: f"{i} {name} " * (1000 * (k + 1)) for k, name in enumerate(("summary.json", "scalars.csv", "results.sca"))}
    write_result_set(out / "same", files)          # rewritten in place: manifest removed first, written last
    write_result_set(out / f"new{i}", files)      # new directories: renamed into place
    if i == 0:
        print("writing", flush=True)
    i += 1
"""


def consistent(files: dict[str, str]) -> bool:
    marks = {text.split(" ", 1)[0] for text in files.values()}
    return len(marks) == 1 and set(files) == {"summary.json", "scalars.csv", "results.sca"}


def test_sigkill_never_leaves_a_partial_or_mixed_set(tmp_path):
    rng = random.Random(5)
    for trial in range(6):
        out = tmp_path / f"t{trial}"
        out.mkdir()
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(out)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline() == "writing\n"  # its first sets are written (instead of a long sleep)
        time.sleep(rng.random() * 0.3)  # killed at a random point of a later set
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        news = [p for p in out.iterdir() if p.name.startswith("new")]
        assert news, "the writer never got going"
        for p in news:
            files = read_result_set(p)
            assert files is not None and consistent(files), p
        same = read_result_set(out / "same")
        assert same is None or consistent(same)
        # what a kill leaves behind is hidden (a dot name) and cleared by the next writer of a sweep
        assert all(p.name.startswith(("new", "same", ".")) for p in out.iterdir())


def test_rewriting_keeps_the_reader_on_one_set(tmp_path):
    write_result_set(tmp_path / "r", {"a": "1", "b": "1"})
    write_result_set(tmp_path / "r", {"a": "2", "b": "2"})
    assert read_result_set(tmp_path / "r") == {"a": "2", "b": "2"}
    os.unlink(tmp_path / "r" / "b")
    assert read_result_set(tmp_path / "r") is None
