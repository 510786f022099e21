"""Packaging: install hints name the real distribution, a missing extra is refused
with the command that installs it, and the license and typing marker ship."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from daxpy.data.extras import DISTRIBUTION, install_command

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# Hides the named packages from the child, as on a core install without that extra.
_HIDE = "import sys\nfor name in {names!r}: sys.modules[name] = None\n"


def _run_without(names, code):
    return subprocess.run([sys.executable, "-c", _HIDE.format(names=names) + code],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_the_distribution_name_is_the_one_every_hint_uses():
    assert PYPROJECT["project"]["name"] == DISTRIBUTION
    assert install_command("dask") == f"pip install '{DISTRIBUTION}[dask]'"
    stale = re.compile(r"pip install ['\"]?daxpy\[")
    sources = [*ROOT.glob("daxpy/**/*.py"), *ROOT.glob("filters/*.py"),
               *ROOT.glob("worklets/*.py"), ROOT / "README.md", *ROOT.glob("docs/**/*.rst")]
    assert [str(p) for p in sources if stale.search(p.read_text())] == []


VTK_USES = {
    "read": "from daxpy.io import read; read('missing.vti')",
    "write": "import daxpy; from daxpy.io import write; "
             "write(daxpy.UniformGrid(dims=(2, 2)), '/tmp/never-written.vti')",
    "to_pyvista": "import daxpy; daxpy.UniformGrid(dims=(2, 2)).to_pyvista()",
}


@pytest.mark.parametrize("use", sorted(VTK_USES))
def test_a_core_install_names_the_vtk_extra(use, tmp_path):
    (tmp_path / "in.vti").write_text("<VTKFile/>")  # read must find a file to reach VTK
    code = ("from daxpy.errors import MissingExtraError\n"
            f"try:\n    {VTK_USES[use]}\nexcept MissingExtraError as err:\n    print(err)\n")
    code = code.replace("missing.vti", str(tmp_path / "in.vti")).replace(
        "/tmp/never-written.vti", str(tmp_path / "out.vti"))
    done = _run_without(["vtk", "vtkmodules", "pyvista"], code)
    assert done.returncode == 0, done.stderr
    assert "install daxpy's vtk extra: pip install 'daxpy-viz[vtk]'" in done.stdout, done.stdout


def test_a_core_install_names_the_dask_extra():
    done = _run_without(["dask"], "import daxpy.dask")
    assert "MissingExtraError" in done.stderr
    assert "pip install 'daxpy-viz[dask]'" in done.stderr


def test_the_cli_reports_a_missing_extra_in_one_line(tmp_path):
    source = tmp_path / "in.vti"
    source.write_text("<VTKFile/>")
    code = ("import sys\nfrom daxpy.cli import main\n"
            f"sys.exit(main(['run', {str(source)!r}, '--field', 't']))")
    done = _run_without(["vtk", "vtkmodules", "pyvista"], code)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "pip install 'daxpy-viz[vtk]'" in done.stderr


def test_license_and_typing_marker_ship():
    assert PYPROJECT["project"]["license"] == {"text": "BSD-3-Clause"}
    assert "BSD 3-Clause License" in (ROOT / "LICENSE").read_text()
    assert PYPROJECT["tool"]["setuptools"]["license-files"] == ["LICENSE"]
    assert (ROOT / "daxpy" / "py.typed").exists()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["daxpy"]


def test_pyvista_finds_the_accessor_through_the_entry_point():
    points = PYPROJECT["project"]["entry-points"]["pyvista.accessors"]
    assert points == {"daxpy": "daxpy.accessor"}


def test_progress_bars_need_tqdm_only_to_show():
    # tqdm is a dependency; an install made with --no-deps (the GPU machine's)
    # still runs everything, without bars.
    done = _run_without(["tqdm"], "from daxpy.io.progress import progress\n"
                                  "with progress('x', enabled=True) as report:\n"
                                  "    report(0.5)\nprint('ran')")
    assert done.returncode == 0 and done.stdout == "ran\n", done.stderr
