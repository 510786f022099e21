"""Each cell's case of an unstructured grid or PolyData on the GPU in one pass: bit
``i`` set where corner ``i`` is at or above a value, 0 for a cell with a NaN or
Inf corner (it makes no output).

The array program (:func:`daxpy.worklets.contour._array_cases`) gathers every
cell's corner values into a table, compares it, widens the bits to int64 to shift
and sum them, and checks the table's finiteness: for 10M hexahedra about 2 GB of
temporaries. This kernel reads each cell's corner ids and values once and writes
its case byte. The comparison is the array program's: against the bound that
:func:`daxpy.worklets._marching.at_least_bound` gives in the field's own dtype.
A corner id outside the field (which a validated grid never holds) reads
nothing and makes the case 0.

Specializations: the field's dtype (float32, float64), the corner ids' dtype
(int32, int64) and the number of corners (2 to 8).

Examples
--------
>>> source_for("float32", "int64", 8)[0]
'cell_cases__f32__i64__k8'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import get_kernel

_BODY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const T* __restrict__ s, const T bound, const long long n_points,
    const I* __restrict__ corners, unsigned char* __restrict__ cases,
    const long long n_cells)
{
    const long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= n_cells) return;
    const I* row = corners + c * K;
    unsigned int bits = 0;
    bool usable = true;
#pragma unroll
    for (int b = 0; b < K; ++b) {
        const long long id = (long long)row[b];
        if ((unsigned long long)id >= (unsigned long long)n_points) {
            usable = false;
            continue;
        }
        const T v = s[id];
        usable = usable && isfinite(v);
        bits |= (unsigned int)(v >= bound) << b;
    }
    cases[c] = usable ? (unsigned char)bits : (unsigned char)0;
}
"""

KINDS = (np.dtype(np.float32), np.dtype(np.float64))
"""Field dtypes with a kernel."""

ID_KINDS = (np.dtype(np.int32), np.dtype(np.int64))
"""Corner id dtypes with a kernel."""

MAX_CORNERS = 8
"""The most corners a kernel's case holds (a byte): hexahedra and voxels."""


def source_for(dtype, id_dtype, corners: int) -> tuple[str, str]:
    """``(name, source)`` of the kernel for a field of ``dtype``, corner ids of
    ``id_dtype`` and cells of ``corners`` corners.

    Examples
    --------
    >>> name, source = source_for("float64", "int32", 4)
    >>> name, "#define K 4" in source
    ('cell_cases__f64__i32__k4', True)
    """
    name = f"cell_cases__{dtype_tag(dtype)}__{dtype_tag(id_dtype)}__k{corners}"
    body = _BODY.replace("NAME", name)
    return name, (f"#define T {ctype(dtype)}\n#define I {ctype(id_dtype)}\n#define K {corners}\n"
                  f"{body}#undef K\n#undef I\n#undef T\n")


def serves(scalars: Any, corners: Any) -> bool:
    """Whether a kernel serves these device ``scalars`` and ``(n, k)`` ``corners``.

    Examples
    --------
    >>> serves(np.zeros(3, np.float32), np.zeros((2, 4), np.int64))
    True
    >>> serves(np.zeros(3, np.int16), np.zeros((2, 4), np.int64))
    False
    """
    return (scalars.dtype in KINDS and corners.dtype in ID_KINDS and corners.ndim == 2
            and 1 <= corners.shape[1] <= MAX_CORNERS)


def cell_cases(scalars: Any, corners: Any, bound: Any) -> Any:
    """The case (uint8) of each cell of ``corners`` (device, ``(n, k)``) from the
    point ``scalars`` (device, float32 or float64): bit ``i`` set where corner ``i``
    is at or above ``bound`` (a scalar of the scalars' dtype), 0 where a corner is
    NaN or infinite.

    Examples
    --------
    >>> callable(cell_cases)
    True
    """
    import cupy

    scalars, corners = cupy.ascontiguousarray(scalars), cupy.ascontiguousarray(corners)
    n_cells = int(corners.shape[0])
    cases = cupy.empty(n_cells, dtype=cupy.uint8)
    if n_cells:
        kernel = get_kernel(*source_for(scalars.dtype, corners.dtype, int(corners.shape[1])))
        kernel(((n_cells + 255) // 256,), (256,),
               (scalars, scalars.dtype.type(bound), np.int64(scalars.shape[0]), corners,
                cases, np.int64(n_cells)))
    return cases
