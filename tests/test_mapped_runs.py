"""Mapped runs: one kernel reading and writing page-locked host memory, asked for
(``mapped=True``) or chosen for a run that a device budget would cut into many
chunks (:func:`daxpy.stream.mapped.maps_instead`)."""

from __future__ import annotations

import numpy as np
import pytest

import daxpy
from daxpy.stream.mapped import MAPPED_AFTER_CHUNKS, maps_instead
from daxpy.stream.streaming import configure


def _cupy():
    return pytest.importorskip("cupy")


def _uniform(dims=(160, 128, 128)):
    """A uniform grid whose fields are big enough to be page-locked in place."""
    grid = daxpy.UniformGrid(dims=dims, spacing=(0.5, 1.0, 2.0))
    rng = np.random.default_rng(11)
    return grid.with_fields(point_data={"f": rng.random(grid.n_points, np.float32)},
                            cell_data={"c": rng.random(grid.n_cells, np.float32)})


_VERBS = {
    "pass_through": lambda pipe: pipe.field("f").pass_through("float64"),
    "gradient": lambda pipe: pipe.field("f").gradient(),
    "point_to_cell": lambda pipe: pipe.point_to_cell("f"),
    "cell_to_point": lambda pipe: pipe.cell_to_point("c"),
}


def test_few_chunks_or_other_grids_are_not_mapped():
    source = _uniform((8, 8, 8))
    pipe = daxpy.pipeline(source)
    pipe.field("f").gradient()
    assert not maps_instead(source, pipe.stages, MAPPED_AFTER_CHUNKS)
    axes = [np.arange(8.0)] * 3
    rect = daxpy.RectilinearGrid(*axes, point_data={"f": np.ones(512, np.float32)})
    rect_pipe = daxpy.pipeline(rect)
    rect_pipe.field("f").gradient()
    assert not maps_instead(rect, rect_pipe.stages, MAPPED_AFTER_CHUNKS + 1)
    two = daxpy.pipeline(source)
    two.field("f").gradient().magnitude()
    assert not maps_instead(source, two.stages, MAPPED_AFTER_CHUNKS + 1)


@pytest.mark.gpu
@pytest.mark.parametrize("asked", [True, False], ids=["mapped=True", "budget"])
@pytest.mark.parametrize("verb", sorted(_VERBS))
def test_gpu_mapped_stage_equals_whole_run(verb, asked):
    cupy = _cupy()
    source = _uniform()
    pipe = daxpy.pipeline(source)
    name = _VERBS[verb](pipe).name
    # Asked for, or chosen under a budget of under a thirtieth of the gradient's working
    # set (16 bytes a point): 128 slabs of one plane for each verb (the planner's count).
    settings = dict(mapped=True) if asked else dict(max_device_bytes=source.n_points * 14 // 30)
    with configure(**settings):
        out, prof = pipe.run(backend="cuda", profile=True)
    assert prof.chunks == 1 and set(prof.inputs.values()) == {"mapped"}
    expected = cupy.asnumpy(pipe.run(backend="cuda", to="device").field(name)[0])
    np.testing.assert_array_equal(out.field(name)[0], expected)


@pytest.mark.gpu
def test_gpu_budget_bound_chain_of_two_stages_stays_chunked():
    cupy = _cupy()
    source = _uniform()
    pipe = daxpy.pipeline(source)
    name = pipe.field("f").gradient().magnitude().name
    budget = source.n_points * 16 // 30   # 128 slabs of one plane, one in flight
    with configure(max_device_bytes=budget):
        out, prof = pipe.run(backend="cuda", profile=True)
    assert prof.chunks > MAPPED_AFTER_CHUNKS and "mapped" not in prof.inputs.values()
    assert 0 < prof.peak_bytes <= budget
    expected = cupy.asnumpy(pipe.run(backend="cuda", to="device").field(name)[0])
    np.testing.assert_array_equal(out.field(name)[0], expected)
