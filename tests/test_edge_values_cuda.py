"""The GPU's one-kernel field interpolation on cut edges (daxpy.cuda.edge_values) and
plane terms (daxpy.cuda.plane_distance.axis_terms) give the array programs' bits; they,
the cut merge's kernels (daxpy.cuda.cut_edges) and the row gathers (daxpy.cuda.gather)
compile without a GPU."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daxpy.cuda import cut_edges
from daxpy.cuda import edge_values as ev
from daxpy.cuda import gather
from daxpy.cuda import plane_distance as pd
from daxpy.worklets._edge_cut import EdgeCut, _array_interpolate

from test_cuda_codegen import _have_compiler, specializations_ptx


@pytest.mark.skipif(not _have_compiler(), reason="needs nvcc or NVRTC (CuPy)")
def test_the_kernels_compile_to_ptx_with_no_fused_multiply_add(tmp_path):
    specializations = [ev.source_for(dtype, widened) for dtype in ("float32", "float64")
                       for widened in (False, True)]
    for names, text in [*(cut_edges.source_for(dtype) for dtype in ("float32", "float64")),
                        cut_edges.shared_source()]:
        specializations += [(name, text) for name in names]
    specializations += [gather.source_for(size) for size in (1, 2, 4, 8)]
    specializations.append(("plane_distance_terms", pd._TERMS))
    ptx = specializations_ptx(specializations, tmp_path)
    # Each product and sum is rounded on its own, as the array programs round them.
    assert all("fma.rn" not in text for text in ptx)


def test_fields_of_other_dtypes_are_left_to_the_array_program():
    assert ev.edge_values(np.zeros(2, np.int32), np.zeros(1), np.zeros(1), np.zeros(1)) is None


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(n_points=st.integers(2, 300), n_cut=st.integers(0, 500), width=st.sampled_from([0, 1, 3]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2**31))
def test_interpolated_fields_are_the_array_programs(n_points, n_cut, width, dtype, seed):
    import cupy

    from daxpy.worklets._edge_cut import interpolate

    rng = np.random.default_rng(seed)
    shape = (n_points,) if width == 0 else (n_points, width)
    values = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)).astype(dtype)
    values.flat[rng.integers(0, values.size, 3)] = [np.nan, np.inf, -0.0]
    lo = rng.integers(0, n_points, n_cut)
    cut = EdgeCut(cupy.asarray(lo), cupy.asarray(rng.integers(0, n_points, n_cut)),
                  cupy.asarray(rng.uniform(-0.5, 1.5, n_cut)), {}, {})
    got = interpolate(cupy.asarray(values), cut)
    want = _array_interpolate(cupy.asarray(values), cut)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert cupy.asnumpy(got).tobytes() == cupy.asnumpy(want).tobytes()


@pytest.mark.gpu
@settings(max_examples=40, deadline=None)
@given(dims=st.tuples(*[st.integers(1, 40)] * 3), seed=st.integers(0, 2**31))
def test_plane_terms_are_the_array_programs(dims, seed):
    import cupy

    rng = np.random.default_rng(seed)
    axes = [np.cumsum(rng.uniform(0.01, 3.0, d)) - rng.uniform(0, 50) for d in dims]
    origin, normal = rng.standard_normal(3) * 10, rng.standard_normal(3)
    got = pd.axis_terms([cupy.asarray(a) for a in axes], origin, normal)
    for term, axis, o, n in zip(got, axes, origin, normal):
        assert cupy.asnumpy(term).tobytes() == ((axis - float(o)) * float(n)).tobytes()
