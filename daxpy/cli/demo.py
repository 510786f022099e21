"""The ``daxpy demo`` pipeline: wavelet -> gradient -> magnitude -> point-to-cell,
and an isosurface of the wavelet.

It builds the field of VTK's ``vtkRTAnalyticSource`` (the "wavelet") with NumPy
on a ``size``³ uniform grid, runs three filters and a contour, writes a ``.vti``
and a ``.vtp`` file, renders a PNG off-screen with PyVista and prints how long
each filter took.

Examples
--------
>>> from daxpy.cli.demo import wavelet
>>> wavelet(21).point_data["RTData"].shape
(9261,)
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..engine.backend import resolve_backend
from ..errors import ArgumentError
from ..data.memory_budget import require_bytes
from ..data.structured import UniformGrid

__all__ = ["DemoResult", "render_png", "run_demo", "wavelet", "wavelet_bytes"]

# vtkRTAnalyticSource's defaults: whole extent [-10, 10]^3, centre 0, these
# magnitudes and frequencies, standard deviation 0.5 on coordinates scaled to
# [-0.5, 0.5].
_EXTENT = 10.0
_MAXIMUM, _STANDARD_DEVIATION = 255.0, 0.5
_FREQUENCIES = (60.0, 30.0, 40.0)
_MAGNITUDES = (10.0, 18.0, 5.0)
# The demo's outputs per point: the gradient (3 float32), its magnitude and the
# cell average (a float32 each, cells < points); counted twice, as the .vti
# writer encodes a copy of each.
_DEMO_BYTES_PER_POINT = 2 * (12 + 4 + 4)


def _check_size(size) -> None:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
        raise ArgumentError(f"size must be an integer >= 2, got {size!r}")


def wavelet_bytes(size: int, dtype=np.float32) -> int:
    """Peak bytes :func:`wavelet` allocates for a ``size``³ grid (an upper bound).

    Building the field takes at most three float64 grids of temporaries at
    once, plus the result in ``dtype``.

    Examples
    --------
    >>> from daxpy.cli.demo import wavelet_bytes
    >>> wavelet_bytes(100)
    28000000
    """
    _check_size(size)
    return int(size) ** 3 * (3 * 8 + np.dtype(dtype).itemsize)


def wavelet(size: int, dtype=np.float32) -> UniformGrid:
    """The field of ``vtkRTAnalyticSource`` on a ``size``³ grid spanning [-10, 10]³.

    Parameters
    ----------
    size : int
        Points along each axis (at least 2). At 21 the grid and the values are
        those of ``vtkRTAnalyticSource`` with its default settings.
    dtype : dtype-like
        Dtype of the ``RTData`` point field (VTK's is float32).

    Returns
    -------
    UniformGrid
        With the point field ``RTData``.

    Raises
    ------
    ArgumentError
        If ``size`` is below 2.
    ResourceError
        If the grid needs more memory than is available
        (:func:`wavelet_bytes`); nothing is allocated then.

    Examples
    --------
    >>> from daxpy.cli.demo import wavelet
    >>> grid = wavelet(3)
    >>> grid.dims, grid.spacing
    ((3, 3, 3), (10.0, 10.0, 10.0))
    >>> round(float(grid.point_data["RTData"][13]), 3)  # the centre
    260.0
    """
    require_bytes(wavelet_bytes(size, dtype), f"wavelet({size})")
    spacing = 2 * _EXTENT / (size - 1)
    grid = UniformGrid(dims=(size,) * 3, origin=(-_EXTENT,) * 3, spacing=(spacing,) * 3)
    # vtkRTAnalyticSource measures from the centre towards the point, scaled by
    # the extent's width: (centre - coordinate) / 20.
    scaled = -grid.axis_coordinates(0) / (2 * _EXTENT)
    x, y, z = scaled, scaled[:, None], scaled[:, None, None]
    values = _MAXIMUM * np.exp(-(x * x + y * y + z * z) / (2 * _STANDARD_DEVIATION ** 2))
    values = (values + _MAGNITUDES[0] * np.sin(_FREQUENCIES[0] * x)
              + _MAGNITUDES[1] * np.sin(_FREQUENCIES[1] * y)
              + _MAGNITUDES[2] * np.cos(_FREQUENCIES[2] * z))
    grid.point_data["RTData"] = values.astype(dtype).reshape(-1)
    return grid


@dataclass
class DemoResult:
    """What :func:`run_demo` produced.

    Attributes
    ----------
    dataset : UniformGrid
        The wavelet with every field the pipeline added.
    backend : str
        ``"cpu"`` or ``"cuda"``.
    timings_ms : dict of str to float
        Wall time of each filter, in pipeline order.
    vti_path : pathlib.Path
        The written dataset.
    vtp_path : pathlib.Path or None
        The written isosurface.
    png_path : pathlib.Path or None
        The rendered image, or None when rendering failed.
    render_error : str or None
        Why rendering failed, when it did.
    """

    dataset: UniformGrid
    backend: str
    timings_ms: dict[str, float] = field(default_factory=dict)
    vti_path: Path | None = None
    vtp_path: Path | None = None
    png_path: Path | None = None
    render_error: str | None = None

    def table(self) -> str:
        """The timing table, one filter per line, then the total.

        Examples
        --------
        >>> from daxpy.cli.demo import DemoResult, wavelet
        >>> print(DemoResult(wavelet(2), "cpu", {"Gradient": 1.5}).table())
        filter           time (ms)
        Gradient             1.500
        total                1.500
        """
        rows = [f"{'filter':<16}{'time (ms)':>10}"]
        rows += [f"{name:<16}{ms:>10.3f}" for name, ms in self.timings_ms.items()]
        rows.append(f"{'total':<16}{sum(self.timings_ms.values()):>10.3f}")
        return "\n".join(rows)


def _pipeline(backend: str):
    """The demo's filters, in order; imported here because filters import the control layer."""
    from ..filters import Gradient, Magnitude, PointToCell

    return [
        Gradient("RTData", result="Gradient", backend=backend),
        Magnitude("Gradient", result="GradientMagnitude", backend=backend),
        PointToCell("GradientMagnitude", result="GradientMagnitudeCells", backend=backend),
    ]


def _wait_for_device(backend: str) -> None:
    if backend == "cuda":
        import cupy

        # The host waits here so that each timing covers the filter's kernels.
        cupy.cuda.Device().synchronize()


# What the PNG shows: the pipeline's final output, a cell field, and the isosurface.
SHOWN_FIELD = "GradientMagnitudeCells"
SHOWN_TITLE = ("GradientMagnitudeCells\n"
               "the magnitude of RTData's gradient, averaged onto the cells")
ISOVALUE = 180.0
"""The value of RTData the demo's isosurface is drawn at."""


def render_png(dataset: UniformGrid, path: Path, window_size=(800, 600),
               surface=None) -> None:
    """Render three orthogonal slices of the pipeline's final output, off-screen,
    and beside them the isosurface when given.

    The slices show the cell field :data:`SHOWN_FIELD` unlit (flat colours),
    so that every pixel's colour is the colour bar's colour for its cell's
    value; the title names the field. The isosurface (lit, one colour) sits in
    its own view, so that it hides no slice. Needs no display: VTK falls back to
    EGL or OSMesa off-screen rendering.

    Parameters
    ----------
    dataset : UniformGrid
        The demo's output (with the ``GradientMagnitudeCells`` cell field).
    path : pathlib.Path
        The PNG file to write.
    window_size : tuple of int
        Image width and height in pixels (twice as wide with a surface).
    surface : PolyData, optional
        The isosurface of RTData at :data:`ISOVALUE`.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from daxpy.cli.demo import render_png, wavelet
    >>> grid = wavelet(8)
    >>> grid.cell_data["GradientMagnitudeCells"] = np.ones(grid.n_cells, np.float32)
    >>> path = os.path.join(tempfile.mkdtemp(), "w.png")
    >>> render_png(grid, path, window_size=(64, 48))
    >>> os.path.getsize(path) > 0
    True
    """
    import pyvista

    pyvista.OFF_SCREEN = True
    mesh = dataset.to_pyvista()
    width, height = window_size
    shape = (1, 2) if surface is not None else (1, 1)
    plotter = pyvista.Plotter(off_screen=True, shape=shape,
                              window_size=[width * shape[1], height])
    try:
        if surface is not None:
            plotter.subplot(0, 1)
            plotter.add_mesh(mesh.outline(), color="black")
            plotter.add_mesh(surface.to_pyvista(), color="tan", smooth_shading=True)
            plotter.add_text(f"daxpy Contour: RTData = {ISOVALUE:g}\n"
                             f"{surface.n_cells:,} triangles", position="upper_left",
                             font_size=11, color="black")
            plotter.set_background("white")
            plotter.camera_position = "iso"
            plotter.camera.zoom(0.9)
            plotter.subplot(0, 0)
        plotter.add_mesh(mesh.outline(), color="black")
        # Unlit: shading would darken or brighten the colours away from the bar's.
        plotter.add_mesh(mesh.slice_orthogonal(), scalars=SHOWN_FIELD, preference="cell",
                         cmap="viridis", lighting=False,
                         scalar_bar_args={"title": SHOWN_FIELD, "color": "black"})
        plotter.add_text(SHOWN_TITLE, position="upper_left", font_size=11, color="black")
        plotter.set_background("white")
        plotter.camera_position = "iso"
        plotter.camera.zoom(0.9)
        plotter.screenshot(os.fspath(path))
    finally:
        plotter.close()


def run_demo(size: int = 128, out_dir: str | os.PathLike = "daxpy-demo",
             backend: str = "auto", render: bool = True) -> DemoResult:
    """Run the demo pipeline; write ``wavelet.vti`` and ``wavelet.png`` in ``out_dir``.

    Parameters
    ----------
    size : int
        Points along each axis of the grid.
    out_dir : str or path-like
        Folder for the outputs (created if missing).
    backend : {"auto", "cpu", "cuda"}
        Where the filters run.
    render : bool
        Render the PNG (in a child process). A failure to render (no OpenGL at
        all) is reported in the result, not raised: the ``.vti`` and the
        timings stand on their own.

    Raises
    ------
    ResourceError
        Before anything is computed, if the wavelet and the filters' outputs
        (written too) need more memory than is available.

    Returns
    -------
    DemoResult

    Examples
    --------
    >>> import tempfile
    >>> from daxpy.cli.demo import run_demo
    >>> result = run_demo(size=8, out_dir=tempfile.mkdtemp(), backend="cpu", render=False)
    >>> list(result.timings_ms)
    ['Gradient', 'Magnitude', 'PointToCell', 'Contour']
    >>> result.vti_path.name
    'wavelet.vti'
    """
    from ..io.files import write

    chosen = resolve_backend(backend)
    require_bytes(wavelet_bytes(size) + int(size) ** 3 * _DEMO_BYTES_PER_POINT,
                  f"the demo on a {size}^3 grid")
    dataset = wavelet(size)
    result = DemoResult(dataset, chosen)
    for step in _pipeline(chosen):
        start = time.perf_counter()
        dataset = step(dataset)
        _wait_for_device(chosen)
        result.timings_ms[type(step).__name__] = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    surface = _isosurface(chosen)(dataset)
    result.timings_ms["Contour"] = (time.perf_counter() - start) * 1e3
    result.dataset = dataset
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result.vti_path = out / "wavelet.vti"
    write(dataset, result.vti_path)
    result.vtp_path = out / "wavelet-isosurface.vtp"
    write(surface, result.vtp_path)
    if render:
        result.png_path, result.render_error = _render_in_child(
            result.vti_path, result.vtp_path, out / "wavelet.png")
    return result


def _isosurface(backend: str):
    """The demo's contour (imported here as the filters import the control layer)."""
    from ..filters import Contour

    return Contour("RTData", values=[ISOVALUE], compute_normals=True, backend=backend)


# A child process renders, because a machine without a usable OpenGL stack can
# crash VTK outright (a segfault while probing OSMesa, for instance): the
# demo's computed results must survive that, and the failure must be reported.
_RENDER_CODE = ("import sys; from daxpy.io import read; from daxpy.cli.demo import render_png; "
                "render_png(read(sys.argv[1]), sys.argv[3], surface=read(sys.argv[2]))")


def _render_in_child(vti_path: Path, vtp_path: Path, png_path: Path, timeout_s: float = 300):
    """Render ``vti_path`` and the surface ``vtp_path`` to ``png_path`` in a child
    process; return (png or None, error)."""
    png_path.unlink(missing_ok=True)
    try:
        child = subprocess.run([sys.executable, "-c", _RENDER_CODE, os.fspath(vti_path),
                                os.fspath(vtp_path), os.fspath(png_path)],
                               capture_output=True, text=True,
                               timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, f"the renderer did not finish within {timeout_s:.0f} s"
    if child.returncode == 0 and png_path.is_file():
        return png_path, None
    if child.returncode < 0:
        status = f"the renderer was killed by {signal.Signals(-child.returncode).name}"
    else:
        status = f"the renderer exited with status {child.returncode}"
    last_lines = child.stderr.strip().splitlines()[-1:]
    return None, status + (f": {last_lines[0]}" if last_lines else "")
