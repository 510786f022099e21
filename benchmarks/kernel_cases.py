"""The cases of the kernel benchmark: data on the GPU, bytes, references, builders.

A :class:`Case` is one worklet on one grid: its inputs (device-resident), the
fewest bytes any kernel for it must move, an independent reference result and
a builder per implementation (``daxpy``, ``hand-tuned``, ``daxpy-generic``).
Each builder returns ``(launch, out)``; ``launch()`` only enqueues kernels.

Examples
--------
>>> hex_min_bytes(n_points=10, n_cells=2, point_in=4, cell_in=0, point_out=0, cell_out=4)
112
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


from . import array_reference as ref
from . import datasets
from .reference import Generic, HandTuned

Builder = Callable[[], tuple[Callable[[], None], Any]]

FIELD_MAP = "sin(f) * g + 0.5 * f"
"""The FieldMap expression of the benchmark (as in cpu_vs_vtk.py)."""


@dataclass
class Case:
    """One worklet on one grid, with everything needed to check and time it."""

    case: str
    grid: str
    n_points: int
    min_bytes: int
    reference: Callable[[], Any]
    daxpy: tuple | None                         # (worklet, dataset, field, association, params)
    hand: Callable[[str | None], tuple] | None = None
    hand_key: str | None = None                 # key of HAND_TUNED_VARIANTS
    generic: Builder | None = None
    rtol: float = 1e-5
    dtype: str = "float32"
    notes: dict = field(default_factory=dict)


def hex_min_bytes(n_points: int, n_cells: int, *, point_in: int, cell_in: int,
                  point_out: int, cell_out: int, coords: bool = False) -> int:
    """Fewest bytes on hexahedra: int32 connectivity (32 B a cell) plus the fields.

    Examples
    --------
    >>> hex_min_bytes(1, 1, point_in=4, cell_in=0, point_out=0, cell_out=4)
    40
    """
    return (32 * n_cells + n_points * (point_in + point_out + (12 if coords else 0))
            + n_cells * (cell_in + cell_out))


def _cupy():
    import cupy

    return cupy


def _device_random(shape, seed: int):
    cp = _cupy()
    return cp.random.default_rng(seed).random(shape, dtype=cp.float32) + cp.float32(0.5)


class CaseBuilder:
    """Builds the grids once and hands out cases; holds the reference kernels."""

    def __init__(self, uniform_points: int, other_points: int, bias_size: int = 16):
        cp = _cupy()
        self.cp = cp
        self.hand = HandTuned()
        self.generic = Generic()
        self.bias = _device_random(bias_size, 9)
        self.uniform = datasets.uniform_grid(datasets.cube_dims(uniform_points))
        other = datasets.cube_dims(other_points)
        self.rect = datasets.rectilinear_grid(other)
        self.curv = datasets.curvilinear_grid(other)
        self.hexes = datasets.hex_grid(other)
        self.mixed = datasets.mixed_grid(other)
        for seed, grid in enumerate((self.uniform, self.rect, self.curv, self.hexes,
                                     self.mixed)):
            grid.point_data["f"] = _device_random(grid.n_points, 10 + seed)
            grid.cell_data["c"] = _device_random(grid.n_cells, 20 + seed)
        self.uniform.point_data["v"] = _device_random((self.uniform.n_points, 3), 30)
        self.uniform.point_data["g"] = _device_random(self.uniform.n_points, 31)
        self.curv_points = cp.asarray(self.curv.points(), dtype=cp.float32)
        self.hex_corners = cp.asarray(self.hexes.cell_blocks()["hex"].corners,
                                      dtype=cp.int32)

    # -- helpers -------------------------------------------------------------
    @staticmethod
    def _axes(grid) -> list:
        return [grid.axis_coordinates(a) for a in range(3)]

    def _structured_cases(self, grid, label: str) -> list[Case]:
        """Gradient, point-to-cell and cell-to-point on one structured grid."""
        cp = self.cp
        f, c = grid.point_data["f"], grid.cell_data["c"]
        dims, n, nc = grid.dims, grid.n_points, grid.n_cells
        if grid.family == "curvilinear":
            pts = self.curv_points
            grad_ref = lambda: ref.gradient_curvilinear(f, pts, dims)
            grad_bytes = n * (4 + 12 + 12)
            hand = lambda v=None: self.hand.gradient_curvilinear(f, pts, dims, v)
            hand_key, rtol = "gradient_curvilinear", 1e-4
        else:
            axes = [cp.asarray(a) for a in self._axes(grid)]
            grad_ref = lambda: ref.gradient_structured(f, dims, axes)
            grad_bytes = n * (4 + 12) + (8 * sum(dims) if grid.family == "rectilinear" else 0)
            if grid.family == "uniform":
                hand = lambda v=None: self.hand.gradient_uniform(f, dims, grid.spacing, v)
                hand_key = "gradient_uniform"
            else:
                hand = lambda v=None: self.hand.gradient_rectilinear(f, axes, v)
                hand_key = "gradient_rectilinear"
            rtol = 1e-5
        return [
            Case("point_gradient", label, n, grad_bytes, grad_ref,
                 ("point_gradient", grid, f, "points", {}), hand, hand_key,
                 lambda: self.generic.point_gradient(grid, f), rtol=rtol),
            Case("point_to_cell", label, n, 4 * (n + nc),
                 lambda: ref.point_to_cell_structured(f, dims),
                 ("point_to_cell", grid, f, "points", {}),
                 lambda v=None: self.hand.point_to_cell_uniform(f, dims, v),
                 "point_to_cell_uniform", lambda: self.generic.point_to_cell(grid, f)),
            Case("cell_to_point", label, n, 4 * (n + nc),
                 lambda: ref.cell_to_point_structured(c, dims),
                 ("cell_to_point", grid, c, "cells", {}),
                 lambda v=None: self.hand.cell_to_point_uniform(c, dims, v),
                 "cell_to_point_uniform", lambda: self.generic.cell_to_point(grid, c)),
        ]

    def _daxpy_reference(self, name: str, grid, values, association: str, **params):
        """The NumPy backend's result (validated against VTK by the test suite)."""
        from daxpy.engine.dispatch import execute

        return lambda: self.cp.asarray(execute(name, grid, values.get(), association,
                                               backend="cpu", **params))

    # -- the cases -------------------------------------------------------------
    def uniform_cases(self) -> list[Case]:
        """Elementwise maps and stencils on the large uniform grid."""
        g = self.uniform
        f, v, n, nc = g.point_data["f"], g.point_data["v"], g.n_points, g.n_cells
        bias = self.bias
        maps = [
            Case("pass_through", "uniform3d", n, 12 * n, lambda: f.astype(self.cp.float64),
                 ("pass_through", g, f, "points", {"dtype": "float64"}),
                 lambda var=None: self.hand.pass_through(f, var), "pass_through",
                 lambda: self.generic.pass_through(f, self.cp.float64), rtol=0.0),
            Case("bias_add", "uniform3d", n, 8 * n + 4 * bias.size,
                 lambda: ref.bias_add(f, bias),
                 # daxpy takes the bias on the host, as BiasAdd's users give it
                 ("bias_add", g, f, "points", {"bias": bias.get()}),
                 lambda var=None: self.hand.bias_add(f, bias, var), "bias_add",
                 lambda: self.generic.bias_add(f, bias), rtol=1e-6,
                 notes={"bias_size": int(bias.size)}),
            Case("magnitude", "uniform3d", n, 16 * n, lambda: ref.magnitude(v),
                 ("magnitude", g, v, "points", {}),
                 lambda var=None: self.hand.magnitude(v, var), "magnitude",
                 lambda: self.generic.magnitude(v), rtol=1e-6),
        ]
        maps.append(self._field_map_case(g))
        cell_gradient = Case("cell_gradient", "uniform3d", n, 4 * n + 12 * nc,
                             self._daxpy_reference("cell_gradient", g, f, "points"),
                             ("cell_gradient", g, f, "points", {}))
        return maps + self._structured_cases(g, "uniform3d") + [cell_gradient]

    def _field_map_case(self, grid) -> Case:
        """FieldMap of ``FIELD_MAP`` over the point fields f and g (daxpy only)."""
        from daxpy.worklets.field_map import as_expression

        cp = self.cp
        f, g = grid.point_data["f"], grid.point_data["g"]

        def expected():
            f64 = f.astype(cp.float64)
            return cp.sin(f64) * g + 0.5 * f64

        params = {"expression": as_expression(FIELD_MAP), "fields": {"f": f, "g": g}}
        return Case("field_map", "uniform3d", grid.n_points, 12 * grid.n_points, expected,
                    ("field_map", grid, f, "points", params),
                    notes={"expression": FIELD_MAP})

    def other_structured_cases(self) -> list[Case]:
        """The three stencils on the rectilinear and the curvilinear grid."""
        return (self._structured_cases(self.rect, "rectilinear3d")
                + self._structured_cases(self.curv, "curvilinear3d"))

    def hex_cases(self) -> list[Case]:
        """Averages and gradients on unstructured hexahedra."""
        g, corners = self.hexes, self.hex_corners
        f, c, n, nc = g.point_data["f"], g.cell_data["c"], g.n_points, g.n_cells
        return [
            Case("point_to_cell", "unstructured_hex", n,
                 hex_min_bytes(n, nc, point_in=4, cell_in=0, point_out=0, cell_out=4),
                 lambda: ref.point_to_cell_corners(f, corners),
                 ("point_to_cell", g, f, "points", {}),
                 lambda v=None: self.hand.point_to_cell_hex(f, corners, v),
                 "point_to_cell_hex", lambda: self.generic.point_to_cell(g, f)),
            Case("cell_to_point", "unstructured_hex", n,
                 hex_min_bytes(n, nc, point_in=0, cell_in=4, point_out=4, cell_out=0),
                 lambda: ref.cell_to_point_corners(c, corners, n),
                 ("cell_to_point", g, c, "cells", {}),
                 generic=lambda: self.generic.cell_to_point(g, c)),
            Case("point_gradient", "unstructured_hex", n,
                 hex_min_bytes(n, nc, point_in=4, cell_in=0, point_out=12, cell_out=0,
                               coords=True),
                 self._daxpy_reference("point_gradient", g, f, "points"),
                 ("point_gradient", g, f, "points", {}), rtol=1e-4),
            Case("cell_gradient", "unstructured_hex", n,
                 hex_min_bytes(n, nc, point_in=4, cell_in=0, point_out=0, cell_out=12,
                               coords=True),
                 self._daxpy_reference("cell_gradient", g, f, "points"),
                 ("cell_gradient", g, f, "points", {}), rtol=1e-4),
        ]

    def mixed_cases(self) -> list[Case]:
        """The point gradient over hexahedra, tetrahedra and wedges together (one kernel
        per shape, each adding its cells' share): int32 corner ids, the field, the
        coordinates and the gradient are its fewest bytes."""
        g = self.mixed
        f, n = g.point_data["f"], g.n_points
        return [Case("point_gradient", "unstructured_mixed", n,
                     4 * g.connectivity.size + n * (4 + 12 + 12),
                     self._daxpy_reference("point_gradient", g, f, "points"),
                     ("point_gradient", g, f, "points", {}), rtol=1e-4)]

    def all_cases(self) -> list[Case]:
        """Every case, uniform first."""
        return (self.uniform_cases() + self.other_structured_cases() + self.hex_cases()
                + self.mixed_cases())
