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


def test_why_not_is_said_in_one_line(tmp_path, monkeypatch):
    import platform

    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(platform, "libc_ver", lambda: ("glibc", "2.36"))
    never, madvise = tmp_path / "never", tmp_path / "madvise"
    never.write_text("always madvise [never]\n")
    madvise.write_text("always [madvise] never\n")
    assert _hugepages.unavailable(str(madvise)) is None
    assert _hugepages.unavailable(str(never)) == (
        f"transparent huge pages are turned off ({never}: always madvise [never])")
    assert _hugepages.unavailable(str(tmp_path / "none")) == (
        f"this kernel has no transparent huge pages ({tmp_path / 'none'} is missing)")
    monkeypatch.setattr(platform, "libc_ver", lambda: ("glibc", "2.31"))
    assert _hugepages.unavailable(str(madvise)) == (
        "glibc 2.35 or later is needed for glibc.malloc.hugetlb (this is 2.31)")
    monkeypatch.setattr(platform, "libc_ver", lambda: ("", ""))
    assert _hugepages.unavailable(str(madvise)) == (
        "glibc's allocator is needed (this Python's C library is not glibc)")
    monkeypatch.setattr(sys, "platform", "darwin")
    assert _hugepages.unavailable(str(madvise)) == "transparent huge pages are a Linux feature (this is darwin)"


def test_a_restart_that_cannot_be_done_says_why(monkeypatch):
    def refuse(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "execve", refuse)
    assert _hugepages.restart() == f"cannot start {sys.executable} again (Permission denied)"
    monkeypatch.setattr(sys, "executable", "")
    assert _hugepages.restart().startswith("this Python does not say how it was started")


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
