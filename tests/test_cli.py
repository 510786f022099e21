"""The ``daxpy`` command line and the demo pipeline behind ``daxpy demo``."""

import subprocess
import sys

import numpy as np
import pytest

vtk = pytest.importorskip("vtk")
pytest.importorskip("pyvista")

import daxpy  # noqa: E402
import daxpy.cli.demo  # noqa: E402
from daxpy.engine.backend import cuda_available  # noqa: E402
from daxpy.cli import main  # noqa: E402
from daxpy.errors import ArgumentError  # noqa: E402
from daxpy.io.interop import from_vtk  # noqa: E402
from daxpy.io import read  # noqa: E402


def test_wavelet_matches_vtk_rt_analytic_source():
    source = vtk.vtkRTAnalyticSource()
    source.Update()
    expected = from_vtk(source.GetOutput())
    grid = daxpy.cli.demo.wavelet(21)
    assert (grid.dims, grid.origin, grid.spacing) == (
        expected.dims, expected.origin, expected.spacing)
    assert grid.point_data["RTData"].dtype == np.float32
    np.testing.assert_allclose(grid.point_data["RTData"], expected.point_data["RTData"],
                               rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("size", [1, 0, 2.5, True])
def test_wavelet_rejects_bad_sizes(size):
    with pytest.raises(ArgumentError, match="size must be an integer >= 2"):
        daxpy.cli.demo.wavelet(size)


def _png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_demo_writes_vti_png_and_table(tmp_path, capsys):
    assert main(["demo", "--size", "16", "--out", str(tmp_path), "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    for row in ("Gradient", "Magnitude", "PointToCell", "Contour", "total", "backend cpu",
                "16^3", "4,096 points", "wavelet-isosurface.vtp"):
        assert row in out
    # The slices' view and the isosurface's, side by side.
    assert _png_size(tmp_path / "wavelet.png") == (1600, 600)
    surface = read(tmp_path / "wavelet-isosurface.vtp")
    assert surface.n_cells > 0 and "Normals" in surface.point_data
    grid = read(tmp_path / "wavelet.vti")
    assert grid.dims == (16, 16, 16)
    assert grid.point_data["Gradient"].shape == (16**3, 3)
    np.testing.assert_allclose(grid.point_data["GradientMagnitude"],
                               np.linalg.norm(grid.point_data["Gradient"], axis=1),
                               rtol=1e-5)
    corners = grid.point_data["GradientMagnitude"].reshape(16, 16, 16)
    cell_mean = sum(corners[k:15 + k, j:15 + j, i:15 + i]
                    for k in (0, 1) for j in (0, 1) for i in (0, 1)) / 8
    np.testing.assert_allclose(grid.cell_data["GradientMagnitudeCells"],
                               cell_mean.reshape(-1), rtol=1e-5)


def test_demo_reports_impossible_rendering(tmp_path, capsys, monkeypatch):
    # Stands in for a machine whose OpenGL stack crashes VTK.
    monkeypatch.setattr(daxpy.cli.demo, "_RENDER_CODE", "import os; os.abort()")
    assert main(["demo", "--size", "8", "--out", str(tmp_path), "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "no PNG: off-screen rendering is not possible here" in out
    assert "SIGABRT" in out
    assert (tmp_path / "wavelet.vti").is_file()
    assert not (tmp_path / "wavelet.png").exists()


def test_demo_without_render(tmp_path):
    result = daxpy.cli.demo.run_demo(size=4, out_dir=tmp_path / "new", backend="cpu",
                                 render=False)
    assert result.png_path is None and result.render_error is None
    assert list(result.timings_ms) == ["Gradient", "Magnitude", "PointToCell", "Contour"]
    assert result.vti_path == tmp_path / "new" / "wavelet.vti"


@pytest.mark.skipif(cuda_available(), reason="checks the message given without a GPU")
def test_cuda_backend_without_gpu_is_a_clear_error(tmp_path, capsys):
    # A missing GPU is a runtime error (status 1), not a usage error.
    assert main(["demo", "--size", "4", "--out", str(tmp_path), "--backend", "cuda"]) == 1
    assert "daxpy demo: error: backend='cuda' needs CuPy" in capsys.readouterr().err


@pytest.mark.parametrize("argv, prog", [(["demo", "--size", "1"], "daxpy demo"),
                                        (["demo", "--backend", "gpu"], "daxpy demo"),
                                        ([], "daxpy"), (["nonsense"], "daxpy")])
def test_bad_arguments_exit_with_usage(argv, prog, capsys):
    # One line naming the problem and where the usage is, status 2.
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{prog}: error: ") and err.count("\n") == 1
    assert err.rstrip().endswith(f"see '{prog} --help'")


def test_module_entry_point():
    done = subprocess.run([sys.executable, "-m", "daxpy.cli", "--version"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == f"daxpy {daxpy.__version__}"
