"""``daxpy run``'s named and derived outputs, its --help, ``daxpy info``, and the
progress bars (shown on a terminal, quiet otherwise)."""

import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("vtk")

import daxpy  # noqa: E402
import daxpy.filters  # noqa: E402,F401
from daxpy.cli import main  # noqa: E402
from daxpy.data.verbs import parse_step, registered_verbs  # noqa: E402
from daxpy.errors import ArgumentError  # noqa: E402
from daxpy.filters import Gradient  # noqa: E402
from daxpy.io import read, write  # noqa: E402
from daxpy.io.progress import progress  # noqa: E402


@pytest.fixture
def velocity_file(tmp_path):
    grid = daxpy.UniformGrid(dims=(6, 5, 4), spacing=(0.5, 1.0, 2.0))
    x, y, z = grid.points().T
    grid.point_data["v"] = np.column_stack([-y * z, x * x, x + y * z])
    write(grid, tmp_path / "in.vti")
    return grid, tmp_path


def test_run_reaches_derived_outputs_and_names_results(velocity_file, capsys):
    grid, folder = velocity_file
    out = folder / "out.vti"
    step = "gradient=vorticity=curl,qcriterion,divergence=div:grad_v"
    assert main(["run", str(folder / "in.vti"), str(out), "--field", "v", "--step", step,
                 "--step", "magnitude:speed", "--backend", "cpu"]) == 0
    printed = capsys.readouterr().out
    for name in ("grad_v", "curl", "QCriterion", "div", "speed"):
        assert f"\n{name}: points" in printed
    assert printed.rstrip().splitlines()[-2].startswith("speed: ")  # the chain's result last
    expected = Gradient("v", "grad_v", vorticity="curl", qcriterion=True, divergence="div",
                        backend="cpu")(grid)
    written = read(out)
    for name in ("grad_v", "curl", "QCriterion", "div"):
        np.testing.assert_allclose(written.point_data[name], expected.point_data[name])
    np.testing.assert_allclose(written.point_data["speed"],
                               np.linalg.norm(expected.point_data["grad_v"], axis=1))


@pytest.mark.parametrize("step, message", [
    ("gradient=bogus", "gradient takes 'point' or 'cell' and any of"),
    ("gradient=point=x", "not 'point=x'"),
    ("magnitude:", "a result name must follow ':'"),
    ("vorticity", "the verb must be one of"),
])
def test_malformed_steps_are_refused(step, message):
    with pytest.raises(ArgumentError, match=message):
        parse_step(step)


def test_run_help_lists_every_step_with_its_argument():
    done = subprocess.run([sys.executable, "-m", "daxpy.cli", "run", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for verb in registered_verbs().values():
        assert f"\n  {verb.usage}: {verb.help}\n" in done.stdout + "\n"
    assert "VERB[=ARG][:NAME]" in done.stdout


def test_info_names_versions_backends_and_the_kernel_cache(tmp_path, monkeypatch, capsys):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "k.bin").write_bytes(b"x" * 2048)
    monkeypatch.setenv("DAXPY_CACHE_DIR", str(tmp_path))
    assert main(["info"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"daxpy {daxpy.__version__} (distribution daxpy-viz)")
    assert f"  numpy: {np.__version__}\n" in printed
    assert "backends: cpu" in printed
    assert f"kernel cache: {tmp_path / 'kernels'}, 1 file(s), 0.0 MiB" in printed


def test_progress_bars_show_fractions_and_stay_quiet_off_a_terminal(capsys):
    with progress("writing x.vti", enabled=True, delay=0) as report:
        time.sleep(0.15)  # tqdm redraws at most every 0.1 s
        report(0.5)
    assert "writing x.vti:  50%" in capsys.readouterr().err
    with progress("writing x.vti") as report:  # stderr is not a terminal under pytest
        report(0.5)
    assert capsys.readouterr().err == ""


def test_a_run_off_a_terminal_prints_no_bar(velocity_file):
    _, folder = velocity_file
    done = subprocess.run([sys.executable, "-m", "daxpy.cli", "run", str(folder / "in.vti"),
                           str(folder / "o.vti"), "--field", "v", "--step", "gradient"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
