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
