"""A guard for tests that run simulations whose bug would be a hang (a wake-up loop that never advances
the clock): the test fails with TimeoutError instead of running until CI gives up."""

from __future__ import annotations

import contextlib
import signal
import threading

__all__ = ["hang_guard"]


@contextlib.contextmanager
def hang_guard(what: str = "", seconds: float = 60):
    """Raise TimeoutError (with *what*) if the block runs longer than *seconds* of wall time.

    SIGALRM reaches the main thread only: elsewhere the block runs unguarded."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum, frame):
        raise TimeoutError(f"no result within {seconds:g} s of wall time: the run hangs" + (f"\n{what}" if what else ""))

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
