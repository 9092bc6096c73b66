"""What ibfabric changes in salabim's internals, and why (all of it start-up or build time).

Each change keeps salabim's behaviour and is skipped when the salabim at
hand does not have the function it replaces.  The data path's own event
list is :mod:`ibfabric.components.eventloop`; the collector's settings for
builds and runs are :func:`ibfabric.kernel.without_gc` and
:func:`ibfabric.kernel.run_gc_threshold`.
"""

from __future__ import annotations

import inspect
import sys
import types

import salabim

__all__ = ["tune_salabim"]


def _cache_signature_check() -> None:
    """Make salabim's per-instance check of parameter names (``inspect.signature``
    on ``__init__``/``setup``/``process``, about 0.5 ms per component) run once
    per class: its answer depends on the class only."""
    check = getattr(salabim.salabim, "_check_overlapping_parameters", None)
    if check is None or getattr(check, "_ibfabric_cached", False):
        return
    seen: set = set()

    def cached(obj, method_name0, method_name1, process=None):
        key = (type(obj), method_name0, method_name1, getattr(process, "__func__", process))
        if key not in seen:
            check(obj, method_name0, method_name1, process)
            seen.add(key)

    cached._ibfabric_cached = True
    salabim.salabim._check_overlapping_parameters = cached


def _fast_caller_frame() -> None:
    """Find salabim's caller by walking frames instead of ``inspect.stack()``.

    salabim looks up the first frame outside its own file (for trace line
    numbers) twice per ``Environment`` and once per ``run``; ``inspect.stack()``
    reads the source lines of every frame on the stack to do it, about 15 ms
    of a simulation's build.  The frame found is the same: the first one
    whose file is neither salabim's nor ``"<string>"``, else the outermost.
    """
    if not callable(getattr(salabim.salabim, "_get_caller_frame", None)):
        return
    if getattr(salabim.salabim._get_caller_frame, "_ibfabric_fast", False):
        return

    def caller_frame():
        f = sys._getframe(1)  # salabim's code, which asked
        own = f.f_code.co_filename
        last = f
        while f is not None:
            if f.f_code.co_filename not in (own, "<string>"):
                return f
            last = f
            f = f.f_back
        return last

    caller_frame._ibfabric_fast = True
    salabim.salabim._get_caller_frame = caller_frame


class _FrameInfoWithoutSource(types.ModuleType):
    """:mod:`inspect` as salabim's module sees it: the same module, except that ``getframeinfo``
    does not read the frame's source lines (salabim reads only ``filename``, ``lineno`` and
    ``function`` of it).  Reading them means finding the frame's module, which walks every module
    Python has imported (about 12 ms, at the first ``Environment`` of a process)."""

    def __getattr__(self, name: str):
        return getattr(inspect, name)

    @staticmethod
    def getframeinfo(frame, context: int = 1):
        """``inspect.getframeinfo(frame, context=0)``: no ``code_context``."""
        return inspect.getframeinfo(frame, 0)


def _frame_info_without_source() -> None:
    if getattr(salabim.salabim, "inspect", None) is inspect:
        salabim.salabim.inspect = _FrameInfoWithoutSource("inspect")


def tune_salabim() -> None:
    """Apply the changes above (once; importing :mod:`ibfabric.simulation` does it)."""
    _cache_signature_check()
    _fast_caller_frame()
    _frame_info_without_source()
