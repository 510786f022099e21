"""BiasAdd: add a bias repeated along the flat last axis, as TensorFlow's
BiasAdd (NHWC): ``out.flat[i] = values.flat[i] + bias[i % len(bias)]``.

For a field of shape ``(n, c)`` and a bias of ``c`` entries this is the usual
per-component bias.

Float fields run, on the CPU backend, its compiled twin: :mod:`daxpy.worklets.bias_add_cpu`.

Examples
--------
>>> import numpy as np
>>> bias_add(None, np.zeros((2, 3), np.float32), bias=[1, 2, 3]).tolist()
[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
"""

from __future__ import annotations

import numpy as np

from daxpy.cuda.codegen import ctype
from daxpy.cuda.spec import CudaSpec, KernelOptions
from daxpy.data.arrays import to_host
from daxpy.errors import ArgumentError

from ._averaging import output_array
from ._maps import register_map


def as_bias(bias) -> np.ndarray:
    """Return ``bias`` as an array after checking it is a non-empty 1-D array of numbers.

    Raises
    ------
    ArgumentError
        Naming the shape or dtype that is wrong.

    Examples
    --------
    >>> as_bias([1, 2]).shape
    (2,)
    """
    # A bias is a small parameter: a device bias is checked (and cast) on the host.
    array = to_host(bias)
    if array.ndim != 1 or array.size == 0:
        raise ArgumentError(f"bias must be a non-empty 1-D array, got shape {array.shape}")
    if array.dtype.kind not in "fiu":
        raise ArgumentError(f"bias must hold real numbers, got dtype {array.dtype}")
    return array


def fit_bias(bias, values: np.ndarray) -> np.ndarray:
    """Return ``bias`` in ``values``' dtype, after checking its length divides their number.

    Raises
    ------
    ArgumentError
        If ``bias`` is malformed (see :func:`as_bias`), its length does not
        divide ``values.size``, or a value has no value of ``values``' dtype
        (NaN, Inf or out of range for an integer field, overflow for a float one).

    Examples
    --------
    >>> import numpy as np
    >>> fit_bias([1.5, 2], np.zeros(4, np.float32)).dtype
    dtype('float32')
    """
    array = as_bias(bias)
    if values.size % array.size:
        raise ArgumentError(
            f"bias has {array.size} entries, which does not divide the field's "
            f"{values.size} values (shape {values.shape}); its length must divide the "
            f"number of values, as the number of components does"
        )
    fitted, wrong = _cast_exactly(array, np.dtype(values.dtype))
    if np.any(wrong):
        raise ArgumentError(
            f"bias value {array[wrong][0].item()!r} does not fit the field's dtype "
            f"{values.dtype}; give a bias that dtype can hold"
        )
    return fitted


def _cast_exactly(array: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """``array`` cast to ``dtype``, and where that cast has no meaningful result:
    into integers, NaN, Inf or a value outside the range (fractions truncate,
    as documented); into floats, a finite value that overflows to Inf."""
    with np.errstate(all="ignore"):
        fitted = array.astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if array.dtype.kind == "f":
            # info.max + 1 is a power of two, exact in floating point.
            wrong = ~np.isfinite(array) | (array <= float(info.min) - 1.0)
            wrong |= array >= float(info.max) + 1.0
        else:
            wrong = (array < info.min) | (array > info.max)
    else:
        wrong = np.isfinite(array) & ~np.isfinite(fitted)
    return fitted, wrong


def bias_add(grid, values: np.ndarray, bias, out: np.ndarray | None = None):
    """Add ``bias`` repeated every ``len(bias)`` values of the flattened field.

    Parameters
    ----------
    grid, values, out
        As for every map (:func:`~daxpy.worklets._maps.register_map`).
    bias : array-like, 1-D
        Bias; cast to the field's dtype. Its length must divide ``values.size``.

    Returns
    -------
    numpy.ndarray
        Of ``values``' shape and dtype.

    Examples
    --------
    >>> import numpy as np
    >>> bias_add(None, np.arange(4.0), bias=[10, 20]).tolist()
    [10.0, 21.0, 12.0, 23.0]
    """
    bias = fit_bias(bias, values)
    out = output_array(out, values.shape, values.dtype)
    rows = (values.size // bias.size, bias.size)
    np.add(values.reshape(rows), bias, out=out.reshape(rows))
    return out


def _same_dtype(dtype: np.dtype, params: dict) -> np.dtype:
    """The output keeps the input's dtype.

    Examples
    --------
    >>> _same_dtype(np.dtype("int16"), {})
    dtype('int16')
    """
    return dtype


def _bias_options(params: dict, in_dtype, out_dtype, components: int,
                  n_values: int, prefix: str = "") -> KernelOptions:
    """The bias, in the field's dtype, as a device array argument.

    Examples
    --------
    >>> _bias_options({"bias": [1, 2]}, np.dtype("float32"), None, 2, 4).params[0]
    ('const float* __restrict__', 'bias')
    """
    # A zero-stride stand-in for the field: fit_bias checks size and dtype only.
    bias = fit_bias(params.get("bias"), np.broadcast_to(np.zeros((), in_dtype), (n_values,)))

    def upload():
        from daxpy.cuda.device import constant

        return constant(bias)

    names = [f"{prefix}bias", f"{prefix}n_bias"]
    return KernelOptions(params=[(f"const {ctype(in_dtype)}* __restrict__", names[0]),
                                 ("const long long", names[1])],
                         values=[upload, np.int64(bias.size)], members=names)


CUDA_SPEC = CudaSpec("bias_add.cuh", "bias_add", "flat", out_dtype=_same_dtype,
                     options=_bias_options, accepted_params=("bias",), map="BiasAddMap")


BIAS_ADD = register_map(
    bias_add, CUDA_SPEC, compiled_cpu=True, cpu_tuple=True,
    doc="values + bias repeated along the flat last axis (TensorFlow BiasAdd).")
