"""Resident runs (daxpy.dask.ResidentPipeline): slabs kept on workers across runs,
ghost planes from the neighbours, results bitwise those of the single-domain run."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("distributed")

import daxpy  # noqa: E402
from daxpy.data.decomposition import box_ids  # noqa: E402
from daxpy.distributed.runner import checked_runner  # noqa: E402
from daxpy.distributed.slab_worker import SlabWorker  # noqa: E402
from daxpy.distributed.slabs import ghost_moves, slab_axis, slab_pieces  # noqa: E402
from daxpy.errors import ArgumentError  # noqa: E402

from strategies import field_arrays, point_dims, structured_grids  # noqa: E402
from test_partition import CELL_CHAINS, STRUCTURED_CHAINS  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(point_dims(max_side=12), st.integers(1, 5), st.integers(0, 3),
       st.sampled_from(["points", "cells"]))
def test_ghost_moves_fill_exactly_the_planes_a_slab_reads_and_does_not_own(dims, parts, depth,
                                                                           association):
    pieces = slab_pieces(dims, parts, depth)
    extent = dims if association == "points" else tuple(max(n - 1, 1) for n in dims)
    owned = [box_ids(p.owned_box(association), extent) for p in pieces]
    covered = np.concatenate([np.arange(s.start, s.stop) for s in owned])
    assert covered.tolist() == list(range(int(np.prod(extent))))  # the slabs tile the grid
    axis = slab_axis(dims)
    filled = {p.index: set() for p in pieces}
    for move in ghost_moves(pieces, depth, association):
        source, target = pieces[move.source], pieces[move.target]
        base = source.read_box(association)[axis][0]
        own = source.owned_box(association)[axis]
        assert own[0] <= move.source_planes[0] + base < move.source_planes[1] + base <= own[1]
        size = move.source_planes[1] - move.source_planes[0]
        assert move.target_planes[1] - move.target_planes[0] == size
        first = target.read_box(association)[axis][0]
        assert (move.target_planes[0] + first) == move.source_planes[0] + base
        filled[target.index] |= set(range(*move.target_planes))
    for piece in pieces:
        (read_lo, read_hi), (own_lo, own_hi) = (piece.read_box(association)[axis],
                                                piece.owned_box(association)[axis])
        ghosts = set(range(read_hi - read_lo)) - set(range(own_lo - read_lo, own_hi - read_lo))
        assert filled[piece.index] == ghosts


def _slab_run(grid, pipe, wanted, values, association, parts):
    """The client's side of a resident run, in this process: one SlabWorker per
    slab, ghost planes routed by hand, two runs (the second on the kept slabs)."""
    found, program = checked_runner(pipe.dataset, pipe.stages, wanted, "cpu", "host")
    pieces = slab_pieces(grid.dims, parts, found.depth)
    moves = [(a, m) for a in ("points", "cells") for m in ghost_moves(pieces, found.depth, a)]
    specs = {"f": (association, values.dtype.str, values.shape[1:])}
    shape = grid.point_shape() if association == "points" else grid.cell_shape()
    shaped = values.reshape(shape + values.shape[1:])
    workers = [SlabWorker(grid.with_fields(), p, program, specs, "host", moves) for p in pieces]
    for worker in workers:
        worker.fill("f", lambda box, out: out.__setitem__(
            ..., shaped[tuple(slice(*b) for b in box)]))
    for _ in range(2):
        inbox = [[] for _ in workers]
        for worker in workers:
            for target, ghost in worker.edges():
                inbox[target].append(ghost)
        for worker, ghosts in zip(workers, inbox):
            worker.run(ghosts)
    axis = 2 - slab_axis(grid.dims)
    return {name: np.concatenate([w.owned()[name] for w in workers], axis=axis)
            for name in program.outputs}


@settings(max_examples=40, deadline=None)
@given(structured_grids(max_side=9), st.integers(1, 4), st.data())
def test_slab_workers_reproduce_the_single_domain_run_bitwise(grid, parts, data):
    association = data.draw(st.sampled_from(["points", "cells"]))
    chains = STRUCTURED_CHAINS if association == "points" else CELL_CHAINS
    chain = chains[data.draw(st.sampled_from(sorted(chains)))]
    size = grid.n_points if association == "points" else grid.n_cells
    values = data.draw(field_arrays(size, ncomp=data.draw(st.sampled_from([1, 3]))))
    kind = "point_data" if association == "points" else "cell_data"
    pipe = daxpy.pipeline(grid.with_fields(**{kind: {"f": values}}))
    out = chain(pipe.field("f"))
    expected = pipe.run(backend="cpu").field(out.name)[0]
    got = _slab_run(grid, pipe, [out.name], values, association, parts)[out.name]
    np.testing.assert_array_equal(got.reshape(expected.shape), expected)


_CHILD = textwrap.dedent("""
    import sys, numpy as np, daxpy
    from distributed import Client, LocalCluster
    from daxpy.dask import ResidentPipeline

    backend, inputs, ghosts = sys.argv[1:4]
    grid = daxpy.UniformGrid(dims=(9, 7, 23), spacing=(0.1, 0.2, 0.3))
    v = np.random.default_rng(0).random((grid.n_points, 3)).astype(np.float32)
    pipe = daxpy.pipeline(grid.with_fields(point_data={"v": v}))
    out = pipe.field("v").magnitude().gradient().map("sin(x)").map("x*x").map("cos(x)")
    expected = pipe.run(backend=backend).point_data[out.name]

    def make(box, out):
        (z0, z1), (y0, y1), (x0, x1) = box
        part = v.reshape(grid.point_shape() + (3,))[z0:z1, y0:y1, x0:x1]
        if inputs == "device":
            import cupy
            part = cupy.asarray(part)
        out[...] = part

    def planes(results, piece, name):
        return piece.index, results[name].shape

    if __name__ == "__main__":
        with LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):
            slabs = ResidentPipeline(pipe, backend=backend, inputs=inputs, ghosts=ghosts)
            slabs.fill("v", make)
            for _ in range(3):
                times = slabs.run()
            got = slabs.gather().point_data[out.name]
            shapes = slabs.apply(planes, out.name)
            print(slabs.ghosts, len(times), ",".join(str(s[1][0]) for s in shapes),
                  bool((got == expected).all()), got.shape == expected.shape)
            slabs.load("v", v[::-1].copy())
            slabs.run()
            again = daxpy.pipeline(grid.with_fields(point_data={"v": v[::-1].copy()}))
            o2 = again.field("v").magnitude().gradient().map("sin(x)").map("x*x").map("cos(x)")
            print(bool((slabs.gather().point_data[out.name]
                        == again.run(backend=backend).point_data[o2.name]).all()))
            slabs.close()
""")


def _child(*args, timeout=240):
    done = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True,
                          text=True, timeout=timeout, cwd=os.path.dirname(__file__))
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:])
    return done.stdout.split()


def test_resident_run_on_worker_processes_equals_the_single_domain_run():
    ghosts, runs, planes, same, same_shape, reloaded = _child("cpu", "host", "auto")
    assert (ghosts, runs, same, same_shape, reloaded) == ("client", "3", "True", "True",
                                                          "True")
    assert planes == "8,8,7"  # 23 planes in three slabs, the owned ones kept


def test_resident_runs_refuse_what_they_cannot_do():
    grid = daxpy.UniformGrid(dims=(4, 4, 4), point_data={"p": np.zeros(64)})
    pipe = daxpy.pipeline(grid)
    pipe.gradient("p")
    from daxpy.dask import ResidentPipeline

    with pytest.raises(ArgumentError, match="needs inputs='device'"):
        ResidentPipeline(pipe, client=object(), ghosts="peer")
    with pytest.raises(ArgumentError, match="inputs must be"):
        ResidentPipeline(pipe, client=object(), inputs="disk")
    ugrid = daxpy.UnstructuredGrid.from_blocks(np.eye(3), {daxpy.data.celltypes.TRIANGLE:
                                                           [[0, 1, 2]]})
    with pytest.raises(ArgumentError, match="structured grids"):
        ResidentPipeline(daxpy.pipeline(ugrid), client=object())


@pytest.mark.gpu
@pytest.mark.parametrize("inputs, ghosts", [("device", "peer"), ("host", "client")])
def test_resident_gpu_run_equals_the_single_gpu_run(inputs, ghosts):
    ghosts_used, _, planes, same, same_shape, reloaded = _child("cuda", inputs, ghosts)
    assert (ghosts_used, planes, same, same_shape, reloaded) == (ghosts, "8,8,7", "True",
                                                                 "True", "True")
