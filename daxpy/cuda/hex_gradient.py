"""The point gradient over hexahedra in three kernels (:file:`_hex_point_gradient.cuh`).

Where a grid's first cell shape is the hexahedron, the point gradient's launch
over it runs three kernels with the same arguments and two scratch arrays made
for each run: the four-corner kernel (a pair's loads are its slot, two words of
ids and the neighbours; about 40 registers instead of 64), which also notes
whether every value is finite; the one-kernel form for every point where a
value or a point is not finite; else the one-kernel form for the points the
four-corner kernel listed for a redo. The results are the one-kernel form's,
bit for bit.

Examples
--------
>>> LISTED, EVERY_POINT_THREADS
(16384, 262144)
"""

from __future__ import annotations

import numpy as np

from .codegen import PER_THREAD, KernelSource, Launch, kernel_name
from .unstructured_arrays import index_dtype

LISTED = 16384
"""Points a run may list for the last kernel (``dax::kHexListed``); past that the
one before it redoes every point."""
EVERY_POINT_THREADS = 1 << 18
"""Threads of the kernel that redoes every point where it must (striding over
them): 1,024 blocks, about a full H100 or H200 at its occupancy, which end at
once when it must not."""


def hexahedra_launch(functions: tuple, n_items: int, count: str, headers: tuple,
                     params: list, setup: list, index: str, preamble: list, parts: tuple,
                     values) -> Launch:
    """The :class:`~daxpy.cuda.codegen.Launch` of the three kernels.

    Parameters
    ----------
    functions : tuple of str
        Device functions of the four-corner, every-point and listed-point
        kernels (:attr:`daxpy.cuda.spec.CudaSpec.hexahedra`).
    n_items, count, headers, params, setup, index, preamble
        As for the one-kernel form (:func:`daxpy.cuda.march.topological_launch`).
    parts : tuple
        Kernel name parts; each kernel adds its role.
    values : callable
        ``values(in, out)`` of ``params``; the scratch arrays follow.

    Examples
    --------
    >>> launch = hexahedra_launch(("a", "b", "c"), 10**6, "n", (), [], [], "int", [], ("g",),
    ...                           None)
    >>> [(k.name, grid) for k, grid, _ in launch.sequence()]
    [('g__four', (977,)), ('g__all', (1024,)), ('g__listed', (16,))]
    >>> launch.kernel.params[-2:]
    [('int* __restrict__', 'scratch_words'), ('int* __restrict__', 'scratch_listed')]
    """
    scratch = [("int* __restrict__", "scratch_words"), (f"{index}* __restrict__", "scratch_listed")]

    def kernel(function: str, role: str, per_thread: int) -> KernelSource:
        return KernelSource(
            kernel_name(*parts, role), headers, params + scratch, count,
            f"dax::{function}(topo, item, src, dst, scratch_words, scratch_listed);",
            setup=setup, index=index, per_thread=per_thread, preamble=preamble)

    def with_scratch(field, out) -> list:
        import cupy

        # Made for each run (a captured run's graph holds its own): the words
        # start at zero, the list is written before it is read.
        return values(field, out) + [cupy.zeros(2, np.int32),
                                     cupy.empty(LISTED, index_dtype(index))]

    four, every, listed = functions
    points = PER_THREAD["points"]
    return Launch(kernel(four, "four", points), n_items, with_scratch,
                  after=((kernel(every, "all", 1), min(n_items, EVERY_POINT_THREADS)),
                         (kernel(listed, "listed", points), LISTED)))
