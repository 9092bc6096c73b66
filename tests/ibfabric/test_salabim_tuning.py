"""What ibfabric changes in salabim (ibfabric/_salabim.py) keeps salabim's behaviour; the collector's settings
for builds and runs (ibfabric/kernel.py)."""

import gc
import inspect

import salabim

import ibfabric.simulation  # noqa: F401  (applies the changes)
from ibfabric.kernel import RUN_GC_THRESHOLD, run_gc_threshold


def test_salabim_still_finds_its_caller_the_frame_outside_its_file():
    assert getattr(salabim.salabim._get_caller_frame, "_ibfabric_fast", False)
    env = salabim.Environment(trace=False, random_seed="", set_numpy_random_seed=False, yieldless=False)
    here = inspect.getframeinfo(inspect.currentframe()).filename
    assert list(env._source_files) == [here]
    assert env._main.frame.f_code.co_filename == here


def test_salabim_reads_frame_info_without_source_lines():
    proxy = salabim.salabim.inspect
    assert proxy is not inspect and proxy.signature is inspect.signature  # everything else is inspect's
    frame = inspect.currentframe()
    info, full = proxy.getframeinfo(frame), inspect.getframeinfo(frame)  # (one line: the frame's line number)
    assert (info.filename, info.lineno, info.function) == (full.filename, full.lineno, full.function)
    assert info.code_context is None


def test_the_young_generation_is_larger_during_a_run_only():
    before = gc.get_threshold()
    with run_gc_threshold():
        assert gc.get_threshold() == (RUN_GC_THRESHOLD, *before[1:])
    assert gc.get_threshold() == before
    gc.disable()
    try:
        with run_gc_threshold():
            assert gc.get_threshold() == before  # the caller's choice: left alone
    finally:
        gc.enable()


def test_a_run_leaves_the_threshold_as_it_was():
    before = gc.get_threshold()
    sim = ibfabric.simulation.Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1"}, seed=1)
    sim.run("2us")
    assert gc.get_threshold() == before


def test_a_build_freezes_what_it_made_and_the_next_frees_a_dropped_simulation():
    import weakref

    Simulation = ibfabric.simulation.Simulation
    first = Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1"}, seed=1)
    assert gc.get_freeze_count() > 0
    first.run("2us")
    gone = weakref.ref(first)
    del first
    kept = Simulation("irregular16", overrides={"**.traffic": "uniform", "**.load": "0.1"}, seed=1)
    assert gone() is None  # dropped: collected before the second build froze anything
    alive = weakref.ref(kept)
    Simulation("irregular16", seed=1)
    assert alive() is kept and kept.run("2us")["conservation_ok"]
