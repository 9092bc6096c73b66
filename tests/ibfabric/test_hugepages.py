"""--huge-pages: the command starts itself again on glibc's allocator with transparent huge
pages, and gives the same results."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ibfabric import _hugepages
from ibfabric.cli import main


def test_the_environment_adds_both_settings_and_keeps_other_tunables():
    env = _hugepages.environment({"GLIBC_TUNABLES": "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=0", "X": "1"})
    assert env["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
    assert env["PYTHONMALLOC"] == "malloc" and env["X"] == "1" and _hugepages.active(env)
    assert not _hugepages.active({"PYTHONMALLOC": "malloc"})
    assert not _hugepages.active({"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"})
    assert _hugepages.environment({})["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"


def test_why_not_is_said_in_one_line(tmp_path):
    never = tmp_path / "never"
    never.write_text("always madvise [never]\n")
    assert "turned off" in (_hugepages.unavailable(str(never)) or "turned off")
    assert "missing" in (_hugepages.unavailable(str(tmp_path / "nothing")) or "missing")
    madvise = tmp_path / "madvise"
    madvise.write_text("always [madvise] never\n")
    why = _hugepages.unavailable(str(madvise))
    import platform

    lib, version = platform.libc_ver()
    if sys.platform.startswith("linux") and lib == "glibc" and tuple(map(int, version.split(".")[:2])) >= (2, 35):
        assert why is None
    else:
        assert why is not None and "\n" not in why


def summary(args: list[str], env: dict | None = None) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-m", "ibfabric", "run", "--time", "20us", "--json", "--no-progress", *args],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for k in ("wall_s", "events_per_s", "packet_hops_per_s", "routing_time_s"):  # (times)
        out.pop(k, None)
    return out, proc.stderr


def test_the_same_results_on_huge_pages():
    env = {k: v for k, v in os.environ.items() if k not in _hugepages.ENV}
    plain, err = summary([], env)
    huge, err_huge = summary(["--huge-pages"], env)
    assert huge == plain and err == ""
    why = _hugepages.unavailable()
    if why is None:
        assert err_huge.strip() == ("ibfabric: on transparent huge pages (PYTHONMALLOC=malloc, "
                                    "GLIBC_TUNABLES=glibc.malloc.hugetlb=1)")
    else:
        assert err_huge.strip() == f"ibfabric: warning: --huge-pages: {why}; running without them"


def test_called_from_python_it_warns_and_runs_without(capsys, monkeypatch):
    for k in _hugepages.ENV:
        monkeypatch.delenv(k, raising=False)
    assert main(["run", "--huge-pages", "--time", "20us", "--json", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("ibfabric: warning: --huge-pages: ") and err.strip().endswith("running without them")


@pytest.mark.parametrize("command", ["run", "sweep", "saturation"])
def test_every_command_that_runs_simulations_has_it(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--huge-pages" in capsys.readouterr().out
