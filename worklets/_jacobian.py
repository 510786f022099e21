"""Spatial derivatives from parametric ones: the small linear algebra of gradients.

Every gradient in daxpy ends the same way: three rows ``dX/dxi_a`` (the
Jacobian of the map from parametric or index space to space) and the matching
derivatives of the field ``df/dxi_a`` give the spatial gradient ``g`` through
``J g = df``. The 3x3 systems are solved in closed form with cross products,
vectorized over a block of evaluations laid out as ``(component, ..., n)``.

Examples
--------
>>> import numpy as np
>>> rows = [np.array([[2.0], [0.0], [0.0]]), np.array([[0.0], [4.0], [0.0]]),
...         np.array([[0.0], [0.0], [1.0]])]
>>> (solve_rows(rows, [np.array([[2.0]]), np.array([[2.0]]), None])[:, :, 0] + 0.0).tolist()
[[1.0, 0.5, 0.0]]
"""

from __future__ import annotations

import numpy as np

from daxpy.errors import ArgumentError, FieldError


def cross(a, b, out: np.ndarray | None = None) -> np.ndarray:
    """Cross product of two blocks of vectors laid out as ``(3, n)``.

    Examples
    --------
    >>> import numpy as np
    >>> cross(np.eye(3)[:, :1], np.eye(3)[:, 1:2])[:, 0].tolist()
    [0.0, 0.0, 1.0]
    """
    if out is None:
        out = np.empty(np.broadcast_shapes(np.shape(a), np.shape(b)),
                       dtype=np.result_type(a, b))
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        np.multiply(a[j], b[k], out=out[i])
        out[i] -= a[k] * b[j]
    return out


def solve_rows(rows, rhs) -> np.ndarray:
    """Solve ``J g = b`` for blocks of 3x3 systems given by the rows of ``J``.

    Parameters
    ----------
    rows : list of 3 arrays, each ``(3, n)``
        Rows of the Jacobian, ``dX/dxi_a`` for a = 0, 1, 2.
    rhs : list of 3 arrays ``(c, n)`` or None
        ``df/dxi_a`` for each of ``c`` field components; None means zero
        (at least one must be given).

    Returns
    -------
    numpy.ndarray
        Shape ``(c, 3, n)``: ``g[comp, j]`` is d(component)/dx_j. Where the
        Jacobian is singular the gradient is zero, as VTK sets it.

    Examples
    --------
    >>> import numpy as np
    >>> e = np.eye(3)[:, :, None]
    >>> solve_rows([e[0], e[1], e[2]], [np.ones((1, 1))] * 3)[0, :, 0].tolist()
    [1.0, 1.0, 1.0]
    """
    r0, r1, r2 = rows
    b0, b1, b2 = rhs
    # b0 (r1 x r2) + b1 (r2 x r0) + b2 (r0 x r1) == (b0 r1 - b1 r0) x r2 + b2 (r0 x r1):
    # two cross products per component instead of three scaled inverse rows.
    r01 = cross(r0, r1)
    det = r2[0] * r01[0]
    det += r2[1] * r01[1]
    det += r2[2] * r01[2]
    scale = np.zeros_like(det)
    np.divide(1, det, out=scale, where=det != 0)
    components = next(b.shape[0] for b in rhs if b is not None)
    gradient = np.empty((components, 3, det.shape[0]), dtype=det.dtype)
    for comp, g in enumerate(gradient):
        w = None if b0 is None else b0[comp] * r1
        if b1 is not None:
            w = -(b1[comp] * r0) if w is None else w - b1[comp] * r0
        if w is None:
            g[...] = 0
        else:
            cross(w, r2, out=g)
        if b2 is not None:
            g += b2[comp] * r01
    gradient *= scale
    return gradient


def combine(coefficients: np.ndarray, corners: np.ndarray, memo: dict | None = None
            ) -> np.ndarray:
    """Weighted sum over the corner axis: ``sum_j w_j * corners[:, j]``.

    Parameters
    ----------
    coefficients : numpy.ndarray, shape (k,)
        One weight per corner; zeros are skipped and +-1 need no product,
        so the derivative at a corner (an edge difference) costs one pass.
    corners : numpy.ndarray, shape (m, k, n)
        Per-corner values (coordinates or field components) of n cells.
    memo : dict, optional
        Results already computed for the same ``corners``: neighbouring
        corners of a cell share their edges, so each edge is built once.

    Returns
    -------
    numpy.ndarray, shape (m, n)

    Examples
    --------
    >>> import numpy as np
    >>> combine(np.array([-1.0, 1.0]), np.array([[[1.0], [3.0]]])).tolist()
    [[2.0]]
    """
    key = (id(corners), coefficients.tobytes())
    if memo is not None and key in memo:
        return memo[key]
    used = [(j, w) for j, w in enumerate(coefficients.tolist()) if w != 0]
    if sorted(w for _, w in used) == [-1.0, 1.0]:
        plus, minus = (j for w in (1.0, -1.0) for j, v in used if v == w)
        total = corners[:, plus] - corners[:, minus]
    else:
        total = np.zeros(corners.shape[::2], dtype=corners.dtype)
        for j, w in used:
            total += corners[:, j] * corners.dtype.type(w)
    if memo is not None:
        memo[key] = total
    return total


def cell_derivatives(table: np.ndarray, points: np.ndarray, values: np.ndarray,
                     normal: np.ndarray | None = None, memo: dict | None = None
                     ) -> np.ndarray:
    """Spatial derivatives of a field inside a block of cells of one shape.

    Parameters
    ----------
    table : numpy.ndarray, shape (dimension, k)
        Parametric derivatives of the interpolation functions at the point of
        evaluation (see :mod:`daxpy.worklets._shape_functions`).
    points : numpy.ndarray, shape (3, k, n)
        Corner coordinates of n cells.
    values : numpy.ndarray, shape (c, k, n)
        Corner values of the field's c components.
    normal : numpy.ndarray, shape (3, n), optional
        For 2-D cells: the plane's normal. VTK derives a surface cell's
        gradient in the plane through its first three corners.
    memo : dict, optional
        Shared by the evaluations of one block of cells (see :func:`combine`).

    Returns
    -------
    numpy.ndarray
        Shape ``(c, 3, n)``.

    Examples
    --------
    >>> import numpy as np
    >>> pts = np.array([[[0.0], [2.0]], [[0.0], [1.0]], [[0.0], [0.0]]])
    >>> cell_derivatives(np.array([[-1.0, 1.0]]), pts, np.array([[[0.0], [1.0]]]))[0, :, 0].tolist()
    [0.5, 1.0, 0.0]
    """
    dimension = table.shape[0]
    c, n = values.shape[0], values.shape[2]
    if dimension == 0:
        return np.zeros((c, 3, n), dtype=values.dtype)
    rows = [combine(table[a], points, memo) for a in range(dimension)]
    rhs = [combine(table[a], values, memo) for a in range(dimension)]
    if dimension == 1:
        return _line_derivatives(rows[0], rhs[0])
    if dimension == 2:
        rows.append(normal)
        rhs.append(None)
    return solve_rows(rows, rhs)


def _line_derivatives(delta_x: np.ndarray, delta_f: np.ndarray) -> np.ndarray:
    # vtkLine::Derivatives divides by each coordinate difference on its own
    # (zero where the line does not move along that axis); kept for agreement.
    gradient = np.zeros((delta_f.shape[0], 3, delta_f.shape[1]), dtype=delta_f.dtype)
    for j in range(3):
        np.divide(delta_f, delta_x[j], out=gradient[:, j], where=delta_x[j] != 0)
    return gradient


def compute_dtype(*dtypes) -> np.dtype:
    """The dtype the gradients compute in: float64, or a wider float given.

    VTK differentiates in double whatever the arrays hold. In float32 a
    Jacobian's determinant (the cube of the cell size) overflows past a
    coordinate scale of ~1e13 and underflows below ~1e-13, and differences of
    values near float32's maximum overflow; in float64 neither can happen for
    float32 inputs. Results are cast back to the field's dtype.

    Examples
    --------
    >>> import numpy as np
    >>> compute_dtype(np.float32, np.dtype(np.float32))
    dtype('float64')
    """
    return np.result_type(np.float64, *dtypes)


def nonfinite_cells(corner_values: np.ndarray) -> np.ndarray | None:
    """Where a cell has a non-finite corner value, per component: ``(c, n)``, or None.

    VTK's derivatives weigh every corner of a cell, those with a zero weight
    too (``0 * nan`` and ``0 * inf`` are NaN), so a NaN or infinite corner
    value makes every derivative of that cell NaN (or infinite): the NaN
    rule. Closed-form derivatives skip the zero weights, so the rule is
    applied with this mask (see :func:`poison`).

    Parameters
    ----------
    corner_values : numpy.ndarray, shape (c, k, n)

    Examples
    --------
    >>> import numpy as np
    >>> nonfinite_cells(np.array([[[1.0, np.inf], [2.0, 3.0]]])).tolist()
    [[False, True]]
    >>> nonfinite_cells(np.ones((1, 2, 3))) is None
    True
    """
    finite = np.isfinite(corner_values).all(axis=1)
    return None if finite.all() else ~finite


def poison(gradient: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Set NaN the derivatives ``(c, 3, n)`` of the cells ``mask`` marks (``(c, n)``).

    Examples
    --------
    >>> import numpy as np
    >>> poison(np.zeros((1, 3, 2)), np.array([[False, True]]))[0].tolist()
    [[0.0, nan], [0.0, nan], [0.0, nan]]
    """
    if mask is not None:
        np.copyto(gradient, np.nan, where=mask[:, None, :])
    return gradient


def prepare_field(values: np.ndarray, n_points: int) -> tuple[np.ndarray, np.dtype]:
    """View a point field as ``(n, c)`` floats and pick the gradient's dtype.

    Floating inputs keep their dtype; integers are converted to float64 (a
    difference of small unsigned integers must not wrap around).

    Raises
    ------
    FieldError
        If the field does not hold one value (or one tuple) per point.

    Examples
    --------
    >>> import numpy as np
    >>> v, dtype = prepare_field(np.arange(3, dtype=np.uint8), 3)
    >>> (v.shape, dtype)
    ((3, 1), dtype('float64'))
    """
    array = np.asarray(values)
    if array.ndim not in (1, 2) or array.shape[0] != n_points:
        raise FieldError(
            f"gradient input must have shape (n,) or (n, c) for the {n_points} points, "
            f"got {array.shape}"
        )
    table = array.reshape(n_points, array.shape[1] if array.ndim == 2 else 1)
    if table.dtype.kind != "f":
        table = table.astype(np.float64)
    return table, table.dtype


def gradient_output(out: np.ndarray | None, n: int, components: int, dtype) -> np.ndarray:
    """Return ``out`` checked against the gradient's shape and dtype, or a new array.

    Raises
    ------
    ArgumentError
        If ``out`` is not a NumPy array of shape ``(n, 3 * components)`` and ``dtype``.

    Examples
    --------
    >>> import numpy as np
    >>> gradient_output(None, 4, 2, np.float32).shape
    (4, 6)
    """
    shape = (n, 3 * components)
    if out is None:
        return np.empty(shape, dtype=dtype)
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dtype:
        raise ArgumentError(
            f"out must be a NumPy array of shape {shape} and dtype {np.dtype(dtype)}, got "
            f"{getattr(out, 'shape', None)} {getattr(out, 'dtype', type(out).__name__)}"
        )
    return out


def first_corners_normal(points: np.ndarray) -> np.ndarray:
    """Normal ``(x1 - x0) x (x2 - x0)`` of the plane through the first three corners.

    Parameters
    ----------
    points : numpy.ndarray, shape (3, k, n)

    Returns
    -------
    numpy.ndarray, shape (3, n)

    Examples
    --------
    >>> import numpy as np
    >>> pts = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0.]])[:, :, None]
    >>> first_corners_normal(pts)[:, 0].tolist()
    [0.0, 0.0, 1.0]
    """
    return cross(points[:, 1] - points[:, 0], points[:, 2] - points[:, 0])
