"""Launchers of the hand-tuned kernels (``hand_tuned.cu``), one per case, with variants.

Examples
--------
>>> HAND_TUNED_BEST["pass_through"] in HAND_TUNED_VARIANTS["pass_through"]
True
"""

from __future__ import annotations

import numpy as np

from ._launch import HERE, Launch, _blocks, _check_32bit, _cupy, _poisoned

# Variants of each hand-tuned case (benchmarks/NOTES.md says what each tests);
# the first-listed name in HAND_TUNED_BEST is what kernels.py runs.
HAND_TUNED_VARIANTS: dict[str, tuple[str, ...]] = {
    "pass_through": ("scalar", "vec2", "vec4", "vec4_stream", "vec4x2_stream", "grid"),
    "bias_add": ("scalar", "vec4", "vec4_smem", "vec4_smem_stream", "vec4_const_stream"),
    "magnitude": ("scalar", "vec4", "vec4_stream"),
    "gradient_uniform": ("naive", "march_ty4_z16", "march_ty8_z4", "march_ty8_z8",
                         "march_ty8_z16", "march_ty8_z32", "march_ty8_z64",
                         "march_lb_ty8_z8", "march_lb_ty8_z16", "march_smem_ty8_z16",
                         "march_stage_ty4_z8", "march_stage_ty8_z4", "march_stage_ty8_z8",
                         "march_stage_ty8_z16"),
    "gradient_rectilinear": ("march_ty8_z4", "march_ty8_z8", "march_ty8_z16", "march_ty8_z32",
                             "march_stage_ty8_z4", "march_stage_ty8_z8",
                             "march_stage_ty8_z32"),
    "gradient_curvilinear": ("naive", "march_z4", "march_z8", "march_z16", "march_stage_z4",
                             "march_stage_z8"),
    "point_to_cell_uniform": ("naive", "march_z16", "march_z32", "march4_z4", "march4_z8",
                              "march4_z16", "march4_z32"),
    "cell_to_point_uniform": ("naive", "march_z16", "march_z32", "march4_z4", "march4_z8",
                              "march4_z16", "march4_z32"),
    "point_to_cell_hex": ("scalar", "vec_conn"),
}
HAND_TUNED_BEST: dict[str, str] = {
    "pass_through": "vec2",
    "bias_add": "vec4",
    "magnitude": "vec4",
    "gradient_uniform": "march_stage_ty8_z4",
    "gradient_rectilinear": "march_stage_ty8_z4",
    "gradient_curvilinear": "march_z8",
    "point_to_cell_uniform": "march4_z8",
    "cell_to_point_uniform": "march4_z8",
    "point_to_cell_hex": "vec_conn",
}

_NAME_EXPRESSIONS = [
    "pass_through_f32_f64<0, false>", "pass_through_f32_f64<1, false>",
    "pass_through_f32_f64<1, true>", "pass_through_f32_f64<2, true>",
    "bias_add_f32<false, 0, false>", "bias_add_f32<true, 0, false>",
    "bias_add_f32<true, 1, false>", "bias_add_f32<true, 1, true>",
    "bias_add_f32<true, 2, true>",
    "magnitude3_f32<false, false>", "magnitude3_f32<true, false>",
    "magnitude3_f32<true, true>",
    "gradient_uniform_march<false, 4, 1, false>", "gradient_uniform_march<false, 8, 1, false>",
    "gradient_uniform_march<false, 8, 5, false>", "gradient_uniform_march<true, 8, 1, false>",
    "gradient_uniform_march<false, 8, 1, true>", "gradient_uniform_march<false, 4, 1, true>",
    "gradient_rectilinear_march<8, false>", "gradient_rectilinear_march<8, true>",
    "gradient_curvilinear_march<8, false>", "gradient_curvilinear_march<8, true>",
    "point_to_cell_uniform_march4<8>", "cell_to_point_uniform_march4<8>",
    "point_to_cell_hex<false>", "point_to_cell_hex<true>",
]


def _check_structured(dims, need_x4: bool = False) -> tuple[int, int, int]:
    nx, ny, nz = (int(d) for d in dims)
    if min(nx, ny, nz) < 2:
        raise ValueError(f"hand-tuned structured kernels are 3-D only, got dims {dims}")
    if need_x4 and nx % 4:
        raise ValueError(f"this hand-tuned kernel reads float4 rows: nx % 4 must be 0, "
                         f"got nx={nx}")
    _check_32bit("3-component point field", 3 * nx * ny * nz)
    return nx, ny, nz


class HandTuned:
    """The hand-tuned kernels, compiled once (NVRTC) on first use.

    Each method takes device arrays and returns ``(launch, out)``; ``variant``
    picks one of ``HAND_TUNED_VARIANTS[case]`` (default: the best one).
    """

    def __init__(self):
        cp = _cupy()
        self.module = cp.RawModule(code=(HERE / "hand_tuned.cu").read_text(),
                                   options=(f"--include-path={HERE}",),
                                   name_expressions=_NAME_EXPRESSIONS)
        self.sm_count = cp.cuda.Device().attributes["MultiProcessorCount"]

    def _fn(self, name: str):
        return self.module.get_function(name)

    @staticmethod
    def _variant(case: str, variant: str | None) -> str:
        chosen = variant or HAND_TUNED_BEST[case]
        if chosen not in HAND_TUNED_VARIANTS[case]:
            raise ValueError(f"unknown variant {chosen!r} of {case}; "
                             f"known: {HAND_TUNED_VARIANTS[case]}")
        return chosen

    # -- elementwise --------------------------------------------------------
    def pass_through(self, x, variant=None):
        """float32 -> float64 copy of a flat field."""
        v = self._variant("pass_through", variant)
        cp = _cupy()
        n = x.size
        _check_32bit("pass_through", n)
        out = _poisoned(x.shape, cp.float64)
        if v == "vec2":
            return Launch(self._fn("pass_through_f32_f64_v2"), (_blocks(max(n // 2, 1), 256),),
                          (256,), (x, out, np.int32(n))), out
        if v == "grid":
            return Launch(self._fn("pass_through_f32_f64_grid"), (8 * self.sm_count,), (256,),
                          (x, out, np.int32(n))), out
        spec = {"scalar": (0, "false"), "vec4": (1, "false"), "vec4_stream": (1, "true"),
                "vec4x2_stream": (2, "true")}[v]
        kernel = self._fn(f"pass_through_f32_f64<{spec[0]}, {spec[1]}>")
        threads = n if spec[0] == 0 else -(-(n // 4) // spec[0])
        threads = max(threads, n & 3)
        return Launch(kernel, (_blocks(threads, 256),), (256,),
                      (x, out, np.int32(n))), out

    def bias_add(self, x, bias, variant=None):
        """``out[e] = x[e] + bias[e % len(bias)]`` over the flat field."""
        v = self._variant("bias_add", variant)
        cp = _cupy()
        n, nb = x.size, bias.size
        _check_32bit("bias_add", n)
        if nb > 4096:
            raise ValueError(f"hand-tuned bias_add holds at most 4096 biases, got {nb}")
        out = _poisoned(x.shape, cp.float32)
        spec = {"scalar": ("false", 0, "false"), "vec4": ("true", 0, "false"),
                "vec4_smem": ("true", 1, "false"), "vec4_smem_stream": ("true", 1, "true"),
                "vec4_const_stream": ("true", 2, "true")}[v]
        kernel = self._fn(f"bias_add_f32<{spec[0]}, {spec[1]}, {spec[2]}>")
        if spec[1] == 2:
            c_bias = self.module.get_global("c_bias")
            c_bias.copy_from_device(bias.data, bias.nbytes)
        threads = n if spec[0] == "false" else max(n // 4, n & 3)
        smem = 4 * nb if spec[1] == 1 else 0
        return Launch(kernel, (_blocks(threads, 256),), (256,),
                      (x, bias, out, np.int32(n), np.int32(nb)), smem), out

    def magnitude(self, vec, variant=None):
        """Length of each tuple of a ``(n, 3)`` float32 field."""
        v = self._variant("magnitude", variant)
        cp = _cupy()
        n = vec.shape[0]
        _check_32bit("magnitude", 3 * n)
        out = _poisoned((n,), cp.float32)
        spec = {"scalar": ("false", "false"), "vec4": ("true", "false"),
                "vec4_stream": ("true", "true")}[v]
        kernel = self._fn(f"magnitude3_f32<{spec[0]}, {spec[1]}>")
        threads = n if spec[0] == "false" else max(n // 4, n & 3)
        return Launch(kernel, (_blocks(threads, 256),), (256,),
                      (vec, out, np.int32(n))), out

    # -- structured stencils ------------------------------------------------
    @staticmethod
    def _march_params(v: str) -> tuple[int, int]:
        """``(rows per block, planes per chunk)`` from a name like ``march_ty8_z32``."""
        tokens = v.split("_")
        ty = next((int(t[2:]) for t in tokens if t.startswith("ty")), 8)
        zc = next(int(t[1:]) for t in tokens if t.startswith("z"))
        return ty, zc

    def gradient_uniform(self, f, dims, spacing, variant=None):
        """VTK point gradient of a scalar float32 field on a 3-D uniform grid."""
        v = self._variant("gradient_uniform", variant)
        cp = _cupy()
        naive = v == "naive"
        nx, ny, nz = _check_structured(dims, need_x4=not naive)
        out = _poisoned((nx * ny * nz, 3), cp.float32)
        inv = tuple(np.float32(1.0 / h) for h in spacing)
        if naive:
            return Launch(self._fn("gradient_uniform_naive"),
                          (_blocks(nx, 32), _blocks(ny, 8), nz), (32, 8),
                          (f, out, np.int32(nx), np.int32(ny), np.int32(nz)) + inv), out
        ty, zc = self._march_params(v)
        smem = "true" if "_smem" in v else "false"
        kernel = self._fn(f"gradient_uniform_march<{smem}, {ty}, {5 if '_lb' in v else 1}, "
                          f"{_flag('_stage' in v)}>")
        grid = (_blocks(nx // 4, 32), _blocks(ny, ty), _blocks(nz, zc))
        return Launch(kernel, grid, (32, ty), (f, out, np.int32(nx), np.int32(ny),
                                               np.int32(nz), np.int32(zc)) + inv), out

    def gradient_rectilinear(self, f, coords, variant=None):
        """VTK point gradient on a 3-D rectilinear grid (coords: three 1-D arrays)."""
        v = self._variant("gradient_rectilinear", variant)
        cp = _cupy()
        dims = tuple(int(c.size) for c in coords)
        nx, ny, nz = _check_structured(dims, need_x4=True)
        invs = [cp.asarray(_rectilinear_inverse(np.asarray(_host(c), np.float64)))
                for c in coords]
        out = _poisoned((nx * ny * nz, 3), cp.float32)
        ty, zc = self._march_params(v)
        grid = (_blocks(nx // 4, 32), _blocks(ny, ty), _blocks(nz, zc))
        kernel = self._fn(f"gradient_rectilinear_march<{ty}, {_flag('_stage' in v)}>")
        return Launch(kernel, grid, (32, ty),
                      (f, out, np.int32(nx), np.int32(ny), np.int32(nz), np.int32(zc),
                       *invs), keep=invs), out

    def gradient_curvilinear(self, f, points, dims, variant=None):
        """VTK point gradient on a 3-D curvilinear grid with float32 points."""
        v = self._variant("gradient_curvilinear", variant)
        cp = _cupy()
        nx, ny, nz = _check_structured(dims)
        if points.dtype != cp.float32:
            raise ValueError(f"gradient_curvilinear reads float32 points, got {points.dtype}")
        out = _poisoned((nx * ny * nz, 3), cp.float32)
        if v.startswith("march"):
            _, zc = self._march_params(v)
            return Launch(self._fn(f"gradient_curvilinear_march<8, {_flag('_stage' in v)}>"),
                          (_blocks(nx, 32), _blocks(ny, 8), _blocks(nz, zc)), (32, 8),
                          (f, points, out, np.int32(nx), np.int32(ny), np.int32(nz),
                           np.int32(zc))), out
        return Launch(self._fn("gradient_curvilinear"),
                      (_blocks(nx, 32), _blocks(ny, 8), nz), (32, 8),
                      (f, points, out, np.int32(nx), np.int32(ny), np.int32(nz))), out

    def point_to_cell_uniform(self, f, dims, variant=None):
        """Cell averages of a scalar float32 point field on a 3-D uniform grid."""
        v = self._variant("point_to_cell_uniform", variant)
        cp = _cupy()
        nx, ny, nz = _check_structured(dims, need_x4=v.startswith("march4"))
        out = _poisoned(((nx - 1) * (ny - 1) * (nz - 1),), cp.float32)
        dim_args = (np.int32(nx), np.int32(ny), np.int32(nz))
        if v == "naive":
            return Launch(self._fn("point_to_cell_uniform_naive"),
                          (_blocks(nx - 1, 32), _blocks(ny - 1, 8), nz - 1), (32, 8),
                          (f, out) + dim_args), out
        zc = int(v.split("_z")[1])
        grid_z = _blocks(nz - 1, zc)
        if v.startswith("march4"):
            return Launch(self._fn("point_to_cell_uniform_march4<8>"),
                          (_blocks(nx // 4, 32), _blocks(ny - 1, 8), grid_z), (32, 8),
                          (f, out) + dim_args + (np.int32(zc),)), out
        return Launch(self._fn("point_to_cell_uniform_march"),
                      (_blocks(nx - 1, 31), _blocks(ny - 1, 8), grid_z), (32, 8),
                      (f, out) + dim_args + (np.int32(zc),)), out

    def cell_to_point_uniform(self, c, dims, variant=None):
        """Point averages of a scalar float32 cell field on a 3-D uniform grid."""
        v = self._variant("cell_to_point_uniform", variant)
        cp = _cupy()
        nx, ny, nz = _check_structured(dims, need_x4=v.startswith("march4"))
        out = _poisoned((nx * ny * nz,), cp.float32)
        dim_args = (np.int32(nx), np.int32(ny), np.int32(nz))
        if v == "naive":
            return Launch(self._fn("cell_to_point_uniform_naive"),
                          (_blocks(nx, 32), _blocks(ny, 8), nz), (32, 8),
                          (c, out) + dim_args), out
        zc = int(v.split("_z")[1])
        if v.startswith("march4"):
            return Launch(self._fn("cell_to_point_uniform_march4<8>"),
                          (_blocks(nx // 4, 32), _blocks(ny, 8), _blocks(nz, zc)), (32, 8),
                          (c, out) + dim_args + (np.int32(zc),)), out
        return Launch(self._fn("cell_to_point_uniform_march"),
                      (_blocks(nx, 31), _blocks(ny, 8), _blocks(nz, zc)), (32, 8),
                      (c, out) + dim_args + (np.int32(zc),)), out

    def point_to_cell_hex(self, f, corners, variant=None):
        """Cell averages over hexahedra; ``corners`` is int32 ``(n_cells, 8)``."""
        v = self._variant("point_to_cell_hex", variant)
        cp = _cupy()
        if corners.dtype != cp.int32 or corners.ndim != 2 or corners.shape[1] != 8:
            raise ValueError("point_to_cell_hex needs int32 corners of shape (n_cells, 8)")
        n_cells = corners.shape[0]
        _check_32bit("hex connectivity", 8 * n_cells)
        out = _poisoned((n_cells,), cp.float32)
        kernel = self._fn(f"point_to_cell_hex<{'true' if v == 'vec_conn' else 'false'}>")
        return Launch(kernel, (_blocks(n_cells, 256),), (256,),
                      (f, corners, out, np.int32(n_cells))), out


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _host(array) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _rectilinear_inverse(x: np.ndarray) -> np.ndarray:
    """``1 / (x[min(i+1, n-1)] - x[max(i-1, 0)])`` in float32 (the stencil's weights).

    Examples
    --------
    >>> _rectilinear_inverse(np.array([0.0, 1.0, 3.0])).tolist()
    [1.0, 0.3333333432674408, 0.5]
    """
    n = x.size
    idx = np.arange(n)
    return (1.0 / (x[np.minimum(idx + 1, n - 1)] - x[np.maximum(idx - 1, 0)])).astype(np.float32)
