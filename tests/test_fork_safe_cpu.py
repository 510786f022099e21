"""Numba's parallel kernels in a forked child (worklets/_fork_safe_cpu.py): a child
forked after its parent ran them runs serial twins, with the parent's results, where
GNU OpenMP would have terminated it. Each case runs in a process of its own."""

import os

import pytest

pytest.importorskip("numba")

from forked_child import forked_lines  # noqa: E402

_FORKED = """
import os, numpy as np, numba, daxpy
from daxpy.worklets import _fork_safe_cpu
from daxpy.worklets.magnitude_cpu import magnitude
from daxpy.worklets.normalize_cpu import normalize
from daxpy.worklets.bias_add_cpu import bias_add
from daxpy.worklets.field_map_cpu import field_map
from daxpy.worklets.gradient_structured_cpu import axis_aligned_point_gradient
from daxpy.worklets.averaging_structured_cpu import point_to_cell_structured
from daxpy.worklets.cell_to_point_cpu import cell_to_point_unstructured
from daxpy.worklets.point_to_cell_cpu import point_to_cell_unstructured
from daxpy.worklets.gradient_cpu import unstructured_point_gradient
numba.set_num_threads(2)
rng = np.random.default_rng(0)
image = daxpy.UniformGrid(dims=(20, 18, 16))
vectors = rng.random((image.n_points, 3))
scalars = rng.random(image.n_points)
from numerics_cases import hexahedra
hexes = hexahedra((12, 11, 10))
hex_values = rng.random(hexes.n_points)
runs = {
    "magnitude": lambda: magnitude(image, vectors),
    "normalize": lambda: normalize(image, vectors),
    "bias_add": lambda: bias_add(image, vectors, np.array([1.0, 2.0, 3.0])),
    "field_map": lambda: field_map(image, scalars, "t * 2 + 1"),
    "gradient": lambda: axis_aligned_point_gradient(image, scalars),
    "point_to_cell": lambda: point_to_cell_structured(image, scalars),
}
cells = rng.random(hexes.n_cells)
runs["unstructured point_to_cell"] = lambda: point_to_cell_unstructured(hexes, hex_values)
runs["unstructured cell_to_point"] = lambda: cell_to_point_unstructured(hexes, cells)
runs["unstructured gradient"] = lambda: unstructured_point_gradient(hexes, hex_values)
before = {name: np.array(run()) for name, run in runs.items()}
print(numba.threading_layer(), len(runs), flush=True)
pid = os.fork()
if pid == 0:
    same = all(np.array_equal(np.array(run()), before[name], equal_nan=True)
               for name, run in runs.items())
    os._exit((0 if same else 3) if _fork_safe_cpu.openmp_forbidden() == (
        numba.threading_layer() == "omp") else 4)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_the_field_kernels_as_its_parent_did():
    # Before the serial twins, the child's first gradient ended it (SIGTERM from
    # Numba's OpenMP layer: "fork() called from a process already using GNU OpenMP").
    forked_lines(_FORKED)
