"""Each cell's case of a structured grid on the GPU in one pass: bit ``i`` set where
corner ``i`` (VTK's voxel, pixel or line order) is at or above a value.

The array program builds a case from one shifted view of the grid per corner (eight
passes over the grid for voxels, each with its temporaries); this kernel reads each
cell's corners once and writes its case byte. The comparison is the array
program's: against the bound that :func:`daxpy.worklets._marching.at_least_bound`
gives in the field's own dtype, so the cases are the same. ``invert`` flips every
bit (a clip keeping the side below the value; NaN is never at or above it).

Specializations: the field's dtype and the number of corners (8, 4 or 2).

Examples
--------
>>> source_for("float32", 8)[0]
'structured_cases__f32__k8'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .codegen import ctype, dtype_tag
from .compile import get_kernel

_BODY = r"""
extern "C" __global__ void __launch_bounds__(256) NAME(
    const T* __restrict__ s, T bound, int invert, long long cx, long long cy,
    long long sx, long long sy, long long sz, unsigned char* __restrict__ cases,
    long long n_cells)
{
    long long c = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (c >= n_cells) return;
    // Cell (i, j, k) along the grid's axes of more than one point; its corner 0.
    long long i = c % cx, j = c / cx % cy, k = c / (cx * cy);
    const T* p = s + i * sx + j * sy + k * sz;
    unsigned int bits = 0;
    // VTK's corner order: x fastest, then y, then z.
    for (int b = 0; b < K; ++b) {
        const T v = p[(b & 1) * sx + ((b >> 1) & 1) * sy + ((b >> 2) & 1) * sz];
        bits |= (unsigned int)((v >= bound) != (invert != 0)) << b;
    }
    cases[c] = (unsigned char)bits;
}
"""


def source_for(dtype, corners: int) -> tuple[str, str]:
    """``(name, source)`` of the kernel for a field of ``dtype`` (float32 or
    float64) and cells of ``corners`` corners.

    Examples
    --------
    >>> name, source = source_for("float64", 4)
    >>> name, "#define K 4" in source
    ('structured_cases__f64__k4', True)
    """
    name = f"structured_cases__{dtype_tag(dtype)}__k{corners}"
    body = _BODY.replace("NAME", name)
    return name, (f"#define T {ctype(dtype)}\n#define K {corners}\n{body}"
                  "#undef K\n#undef T\n")


def structured_cases(scalars: Any, dims: tuple, bound: Any, invert: bool = False) -> Any:
    """The case (uint8) of every cell of a structured grid of ``dims`` points, in cell
    id order, from its point ``scalars`` (float32 or float64, on the device).

    Parameters
    ----------
    scalars : cupy.ndarray, shape (n_points,)
    dims : tuple of int
        The grid's points along x, y and z (at least one above 1).
    bound : NumPy scalar of the scalars' dtype
        A corner is in where its value is at or above it.
    invert : bool
        Flip every corner's bit.

    Returns
    -------
    cupy.ndarray of uint8, shape (n_cells,)

    Examples
    --------
    >>> callable(structured_cases)
    True
    """
    import cupy

    scalars = cupy.ascontiguousarray(scalars)
    active = [a for a in range(3) if dims[a] > 1]
    strides = np.cumprod([1] + [int(dims[a]) for a in active][:-1]).tolist()
    cells = [int(dims[a]) - 1 for a in active]
    # Axes past the grid's dimension have one cell and no stride.
    strides += [0] * (3 - len(active))
    cells += [1] * (3 - len(cells))
    n_cells = int(np.prod(cells))
    cases = cupy.empty(n_cells, dtype=cupy.uint8)
    if n_cells:
        kernel = get_kernel(*source_for(scalars.dtype, 2 ** len(active)))
        kernel(((n_cells + 255) // 256,), (256,),
               (scalars, scalars.dtype.type(bound), np.int32(bool(invert)),
                np.int64(cells[0]), np.int64(cells[1]), np.int64(strides[0]),
                np.int64(strides[1]), np.int64(strides[2]), cases, np.int64(n_cells)))
    return cases
