"""No data may be lost: a write that fails, however it fails, leaves the file it
would replace as it was and no partial or temporary file behind.

Failures are simulated inside the writer (VTK's writer returning 0, reporting
only an error message, writing half a file and raising), at the disk (ENOSPC
from fsync, VTK writing into /dev/full, a failed rename), and by killing a
process in the middle of a large write.
"""

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy  # noqa: E402
import daxpy.io.files as dio  # noqa: E402
import daxpy.io.safe_write as safe_write  # noqa: E402
from daxpy.errors import DataFileError  # noqa: E402
from daxpy.cli.demo import wavelet  # noqa: E402
from daxpy.io import read, write  # noqa: E402

FORMATS = {".vti": "uniform", ".vtr": "rectilinear", ".vts": "curvilinear",
           ".vtu": "unstructured", ".vtk": "uniform"}
SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def grid_of(family: str, value: float = 0.0):
    """A small grid of ``family`` with a point and a cell field set to ``value``."""
    uniform = daxpy.UniformGrid(dims=(3, 3, 2))
    grid = {
        "uniform": uniform,
        "rectilinear": daxpy.RectilinearGrid([0.0, 1, 2], [0.0, 1, 2], [0.0, 1]),
        "curvilinear": daxpy.CurvilinearGrid(uniform.dims, uniform.points()),
        "unstructured": daxpy.UnstructuredGrid.from_blocks(
            uniform.points(), {10: np.array([[0, 1, 3, 9], [1, 4, 3, 10]])}),  # tetra
    }[family]
    grid.point_data["p"] = np.full(grid.n_points, value)
    grid.cell_data["c"] = np.full(grid.n_cells, value, dtype=np.float32)
    return grid


def folder_state(folder) -> dict:
    """Every file of ``folder`` (hidden ones included) and its bytes."""
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


class HalfWriteThenRaise:
    """Writes half a file where the writer was pointed, then raises."""

    def __call__(self, vtk_object, writer_name, temporary, shown, progress):
        with open(temporary, "wb") as out:
            out.write(b"<VTKFile half")
        raise DataFileError("simulated: the writer failed half way")


class VtkWriterReturning:
    """The real VTK writer, made to report failure as VTK's writers do: a 0
    from ``Write`` or only an ``ErrorEvent``, after writing the whole file."""

    def __init__(self, real, how):
        self._real, self._how = real, how

    def __getattr__(self, name):
        return getattr(self._real, name)

    def Write(self):
        status = self._real.Write()
        if self._how == "error_event":
            self._real.InvokeEvent("ErrorEvent", "simulated: VTK reported an error")
            return status
        return 0


def _failure(kind, monkeypatch, tmp_path):
    """Install the failure ``kind``; each makes ``write`` fail mid-way."""
    if kind == "half_then_raise":
        monkeypatch.setattr(dio, "_vtk_write", HalfWriteThenRaise())
    elif kind in ("return_zero", "error_event"):
        make = dio._vtk_class
        monkeypatch.setattr(dio, "_vtk_class",
                            lambda name: VtkWriterReturning(make(name), kind))
    elif kind == "enospc_at_fsync":
        def full_disk(_descriptor):
            raise OSError(errno.ENOSPC, "No space left on device")
        monkeypatch.setattr(safe_write.os, "fsync", full_disk)
    elif kind == "rename_fails":
        def cross_device(_src, _dst):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        monkeypatch.setattr(safe_write.os, "replace", cross_device)
    elif kind == "vtk_into_dev_full":
        # VTK's own writer meets a full disk: the temporary file is /dev/full.
        def dev_full(target):
            folder, name = os.path.split(target)
            link = os.path.join(folder, f".{name}.daxpy-devfull{os.path.splitext(name)[1]}")
            os.symlink("/dev/full", link)
            return link
        monkeypatch.setattr(safe_write, "_create_temporary", dev_full)
    elif kind == "interrupt":
        def interrupted(*_args):
            raise KeyboardInterrupt
        monkeypatch.setattr(dio, "_vtk_write", interrupted)


FAILURES = ["half_then_raise", "return_zero", "error_event", "enospc_at_fsync",
            "rename_fails", "vtk_into_dev_full", "interrupt"]


@pytest.mark.parametrize("failure", FAILURES)
def test_failed_write_keeps_old_file(failure, tmp_path, monkeypatch):
    @SETTINGS
    @given(extension=st.sampled_from(sorted(FORMATS)), existed=st.booleans(),
           value=st.floats(-1e6, 1e6))
    def check(extension, existed, value):
        folder = tmp_path / f"case{len(os.listdir(tmp_path))}"
        folder.mkdir()
        target = folder / f"data{extension}"
        old = grid_of(FORMATS[extension], 1.0)
        if existed:
            write(old, target)
        before = folder_state(folder)
        with monkeypatch.context() as patch:
            _failure(failure, patch, folder)
            expected = KeyboardInterrupt if failure == "interrupt" else DataFileError
            with pytest.raises(expected):
                write(grid_of(FORMATS[extension], value), target)
        assert folder_state(folder) == before  # old bytes, and nothing left behind
        if existed:
            np.testing.assert_array_equal(read(target).point_data["p"], old.point_data["p"])

    check()


def test_vtk_disk_full_message_names_target(tmp_path, monkeypatch):
    _failure("vtk_into_dev_full", monkeypatch, tmp_path)
    with pytest.raises(DataFileError, match=r"VTK could not write '.*out\.vtu'.*nothing was"):
        write(grid_of("unstructured"), tmp_path / "out.vtu")


def test_successful_write_replaces_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "g.vti"
    for value in (1.0, 2.0):
        write(grid_of("uniform", value), target)
        assert os.listdir(tmp_path) == ["g.vti"]
        assert read(target).point_data["p"][0] == value


def test_permission_bits_are_kept(tmp_path):
    target = tmp_path / "g.vtk"
    write(grid_of("uniform"), target)
    os.chmod(target, 0o640)
    write(grid_of("uniform", 5.0), target)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write(grid_of("uniform"), tmp_path / "g.vti")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "g.vti").st_mode) == 0o640


def test_symlink_is_written_through(tmp_path):
    real = tmp_path / "real.vti"
    write(grid_of("uniform", 1.0), real)
    (tmp_path / "link.vti").symlink_to(real)
    write(grid_of("uniform", 7.0), tmp_path / "link.vti")
    assert (tmp_path / "link.vti").is_symlink()
    assert read(real).point_data["p"][0] == 7.0
    assert sorted(os.listdir(tmp_path)) == ["link.vti", "real.vti"]


def test_read_dataset_does_not_reference_its_file(tmp_path):
    target = tmp_path / "g.vtu"
    write(grid_of("unstructured", 3.0), target)
    grid = read(target)
    target.write_bytes(b"overwritten")
    os.remove(target)
    assert grid.point_data["p"].tolist() == [3.0] * grid.n_points
    assert grid.connectivity.tolist() == [0, 1, 3, 9, 1, 4, 3, 10]


@pytest.mark.parametrize("extension", [".vti", ".vtk"])
def test_cli_run_over_its_own_input(extension, tmp_path):
    path = tmp_path / f"in{extension}"
    write(wavelet(6), path)
    before = read(path).point_data["RTData"].copy()
    done = subprocess.run([sys.executable, "-m", "daxpy.cli", "run", str(path), str(path),
                           "--field", "RTData", "--step", "gradient"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = read(path)
    np.testing.assert_array_equal(after.point_data["RTData"], before)
    assert len(after.point_data) == 2
    assert os.listdir(tmp_path) == [path.name]


KILLED_WRITER = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))
    import numpy as np, daxpy
    from daxpy.io import write
    # Random values do not compress: zlib keeps the writer busy for a while.
    values = np.random.default_rng(0).random(160 ** 3)
    grid = daxpy.UniformGrid(dims=(160, 160, 160), point_data={"a": values, "b": values})
    print("writing", flush=True)
    write(grid, sys.argv[1])
""")


@pytest.mark.parametrize("extension", [".vti", ".vtk"])
def test_killed_mid_write_keeps_old_file(extension, tmp_path):
    target = tmp_path / f"big{extension}"
    write(grid_of("uniform", 4.0), target)
    old = target.read_bytes()
    child = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "writing"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            partial = [p for p in tmp_path.iterdir() if ".daxpy-" in p.name]
            if partial and partial[0].stat().st_size > 0:
                break
            time.sleep(0.002)
        assert child.poll() is None, "the write finished before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert target.read_bytes() == old
    assert read(target).point_data["p"][0] == 4.0
    # A killed process cannot clean up: only its hidden temporary may remain.
    assert all(p.name == target.name or p.name.startswith(".big.daxpy-")
               for p in tmp_path.iterdir())
