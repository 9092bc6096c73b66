"""ibfabric._arrays: numpy's unique and percentile, bit for bit, without numpy.ma."""

from __future__ import annotations

import math
import struct

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ibfabric._arrays import percentile, unique


def bits(x: float) -> bytes:
    return b"nan" if math.isnan(x) else struct.pack("<d", x)


def numpys(values, q: float) -> float:
    with np.errstate(invalid="ignore"):  # (inf - inf: numpy warns, then gives nan)
        return float(np.percentile(values, q))


@settings(max_examples=500, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 60), elements=st.floats(allow_nan=True, allow_infinity=True, width=64)),
       st.one_of(st.sampled_from([0.0, 50.0, 99.0, 99.9, 100.0, 25.0, 75.0]), st.floats(0, 100)))
def test_percentile_is_numpys(values, q):
    assert bits(percentile(values, q)) == bits(numpys(values, q))


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 2000), elements=st.floats(0, 1e6, width=64)),
       st.sampled_from([0.0, 50.0, 99.0, 100.0]))
def test_percentile_of_latencies_is_numpys(values, q):
    assert bits(percentile(values, q)) == bits(numpys(values, q))


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 5e-324, -5e-324]), min_size=1, max_size=12),
       st.one_of(st.sampled_from([0.0, -0.0, 10.0, 50.0, 99.0, 100.0]), st.floats(0, 100)))
def test_percentile_of_signed_zeros_and_infinities_is_numpys(values, q):
    # equal values of different bits: numpy's partition decides which one a rank gets
    a = np.array(values)
    assert bits(percentile(a, q)) == bits(numpys(a, q))


def test_percentile_leaves_the_input_alone():
    values = np.array([3.0, 1.0, 2.0])
    assert percentile(values, 50) == 2.0 and values.tolist() == [3.0, 1.0, 2.0]


@settings(max_examples=300, deadline=None)
@given(hnp.arrays(st.sampled_from([np.int8, np.int32, np.int64]), st.integers(0, 80),
                  elements=st.integers(-100, 100)))
def test_unique_is_numpys(a):
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()

