"""The hexahedra point gradient on the CPU: the generic kernel's bits on every
path it takes (walking cells, visiting points, a block of a mixed grid, the NaN
rule), on one thread and on two.

The kernel runs its ranges on Python threads over compiled functions compiled
apart (so that a first use compiles fast): each range writes its own points, so
neither the thread count nor the order the ranges finish in may show.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import daxpy
from daxpy.data.celltypes import HEXAHEDRON, TETRA, WEDGE

from strategies import field_arrays, unstructured_grids


def _generic(points, table, corners, starts, cells, check, counts, total, out, mode):
    """The hexahedra kernel's contract, met by the kernel of every shape."""
    from daxpy.worklets import gradient_cpu
    from daxpy.worklets._cell_gradients import _corner_tables
    from daxpy.worklets._derivatives_cpu import sparse

    return gradient_cpu._corner_kernel(points, table, corners, starts, cells,
                                       sparse(np.stack(_corner_tables("hex"))), 3, check,
                                       counts, total, out, mode)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_hexahedra_point_gradient_gives_the_generic_kernels_bits(data):
    from daxpy.worklets import gradient_cpu

    shapes = data.draw(st.sampled_from([(HEXAHEDRON,), (HEXAHEDRON, TETRA, WEDGE)]),
                       label="shapes")
    grid = data.draw(unstructured_grids(shapes=shapes, max_side=5))
    cell_blocks = grid.cell_blocks()
    assume("hex" in cell_blocks)
    hexes = np.array(cell_blocks["hex"].corners)
    if data.draw(st.booleans(), label="cells shuffled after the first half"):
        # Ranges whose cells follow their points walk them, the others visit points.
        half = len(hexes) // 2
        order = np.random.default_rng(data.draw(st.integers(0, 99))).permutation(len(hexes) - half)
        hexes = np.concatenate([hexes[:half], hexes[half:][order]])
    # Other shapes: the blocks' sums meet in the float64 buffer, the hexahedra's
    # first (before wedges), last (after tetrahedra) or alone.
    others = {b.shape.vtk_id: np.array(b.corners) for name, b in cell_blocks.items()
              if name != "hex"}
    grid = daxpy.UnstructuredGrid.from_blocks(grid.points(), {HEXAHEDRON: hexes, **others})
    values = data.draw(field_arrays(grid.n_points))
    if data.draw(st.booleans(), label="non-finite"):
        values.reshape(grid.n_points, -1)[grid.n_points // 2, -1] = np.nan
    daxpy.configure_cpu(threads=data.draw(st.sampled_from([1, 2]), label="threads"))
    try:
        ours = gradient_cpu.unstructured_point_gradient(grid, values)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(gradient_cpu, "hex_point_gradient", _generic)
            theirs = gradient_cpu.unstructured_point_gradient(grid, values)
    finally:
        daxpy.configure_cpu(threads=None)
    assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()
