"""Collection for the whole suite."""

import atexit
import os
import shutil
import tempfile

#: tests/data holds inputs, among them the demo plugin package with its own tests: those run
#: against the installed package, in a subprocess of tests/plugins/test_manager.py, not here
collect_ignore = ["data"]

# The suite's NED parse and grammar caches (ibfabric.ned_like.parsecache) go to a private directory
# of its own, removed at the end (subprocesses inherit it), not to the user's ~/.cache/ibfabric:
# the suite parses hundreds of texts, which would push out the entries of the user's own runs
# (the cache keeps 200).  A directory the caller sets (IBFABRIC_CACHE_DIR) is used as given.
if "IBFABRIC_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="ibfabric-tests-cache-")
    os.environ["IBFABRIC_CACHE_DIR"] = _cache
    atexit.register(shutil.rmtree, _cache, True)

import faulthandler  # noqa: E402

import pytest  # noqa: E402

#: A test that runs longer than this is a hang (the slowest test takes under a minute on a busy
#: 2-core machine): the process prints every thread's traceback and exits with status 1, so CI
#: fails at once with the test's name and the loop it was stuck in, instead of running until CI's
#: own limit cuts it off with nothing to show.  IBFABRIC_TEST_LIMIT_S changes it (0: no limit).
TEST_LIMIT_S = float(os.environ.get("IBFABRIC_TEST_LIMIT_S", "600"))


_stderr = None  # a copy of the terminal's stderr, taken before pytest captures the tests' output


def pytest_configure(config):
    global _stderr
    _stderr = os.fdopen(os.dup(2), "w")


def pytest_unconfigure(config):
    if _stderr is not None:
        _stderr.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if TEST_LIMIT_S > 0:
        faulthandler.dump_traceback_later(TEST_LIMIT_S, exit=True, file=_stderr)
    try:
        return (yield)
    finally:
        if TEST_LIMIT_S > 0:
            faulthandler.cancel_dump_traceback_later()
