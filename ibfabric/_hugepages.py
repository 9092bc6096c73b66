"""``--huge-pages``: run a big fabric with its memory on transparent huge pages.

A packet-hop on a big fabric touches a few dozen Python objects spread over
gigabytes, and much of its time goes to TLB misses (docs/performance.md,
"flat cost").  Python's own allocator takes its memory in 1 MiB pieces that
the kernel backs with 4 KiB pages; glibc's allocator, with the tunable
``glibc.malloc.hugetlb=1`` (glibc 2.35 and later), asks the kernel for
transparent huge pages (2 MiB) for its heap.  Both settings must be in the
environment before Python starts, so the command line starts itself again
(the same interpreter options, script and arguments) with them: ``PYTHONMALLOC=malloc`` and ``GLIBC_TUNABLES=glibc.malloc.hugetlb=1``
(added to any tunables already set).  The results are the same; only the
time changes (faster on big fabrics, a little slower on small ones).
"""

from __future__ import annotations

import os
import sys

__all__ = ["ENV", "active", "environment", "restart", "unavailable"]

#: What the environment must hold: variable -> setting.
ENV = {"PYTHONMALLOC": "malloc", "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}
THP = "/sys/kernel/mm/transparent_hugepage/enabled"


def unavailable(thp: str = THP) -> str | None:
    """Why huge pages cannot be had here (one line), or None when they can."""
    if not sys.platform.startswith("linux"):
        return f"transparent huge pages are a Linux feature (this is {sys.platform})"
    if sys.flags.ignore_environment:
        return "this Python ignores PYTHON* environment variables (-E or -I), PYTHONMALLOC among them"
    import platform

    lib, version = platform.libc_ver()
    if lib != "glibc":
        return "glibc's allocator is needed (this Python's C library is not glibc)"
    try:
        if tuple(int(x) for x in version.split(".")[:2]) < (2, 35):
            return f"glibc 2.35 or later is needed for glibc.malloc.hugetlb (this is {version})"
    except ValueError:
        return f"glibc's version is unreadable ({version!r})"
    try:
        with open(thp) as f:
            mode = f.read()
    except OSError:
        return f"this kernel has no transparent huge pages ({thp} is missing)"
    if "[never]" in mode:
        return f"transparent huge pages are turned off ({thp}: {mode.strip()})"
    return None


def active(env=None) -> bool:
    """Whether *env* (default: this process's) already holds both settings."""
    env = os.environ if env is None else env
    return env.get("PYTHONMALLOC") == "malloc" and ENV["GLIBC_TUNABLES"] in env.get("GLIBC_TUNABLES", "").split(":")


def environment(env=None) -> dict[str, str]:
    """*env* (default: this process's) with both settings (other tunables are kept)."""
    env = dict(os.environ if env is None else env)
    tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t and not t.startswith("glibc.malloc.hugetlb=")]
    env["GLIBC_TUNABLES"] = ":".join([*tunables, ENV["GLIBC_TUNABLES"]])
    env["PYTHONMALLOC"] = ENV["PYTHONMALLOC"]
    return env


def restart() -> str:
    """Replace this process with itself, started again as it was (``sys.orig_argv``: the same
    interpreter options, script or ``-m`` and arguments) in :func:`environment`.  Returns only
    if that cannot be done: why, in one line."""
    argv = getattr(sys, "orig_argv", None)
    if not sys.executable or not argv:
        return "this Python does not say how it was started (sys.executable, sys.orig_argv)"
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, argv, environment())
    except OSError as exc:
        return f"cannot start {sys.executable} again ({exc.strerror or exc})"
    return "the restart returned"  # (execve does not return when it succeeds)
