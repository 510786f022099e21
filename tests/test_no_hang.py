"""Nothing may hang: an output target that is not a regular file or a new path in
a writable folder is refused, naming the path and the problem, before anything
is computed or written. A FIFO is never opened (opening one blocks until a
reader comes), so every FIFO case runs in a child process with a time limit:
a hang fails the test instead of stalling pytest.
"""

import os
import socket
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy  # noqa: E402
import daxpy.io.interop  # noqa: E402
from daxpy.errors import ArgumentError, DataFileError  # noqa: E402
from daxpy.io import check_output_target, read, write  # noqa: E402

EXTENSIONS = [".vti", ".vtk"]


def make_target(kind: str, folder, extension: str) -> tuple[str, str]:
    """Create an output target of ``kind`` in ``folder``; return it and the
    words the refusal must contain."""
    path = str(folder / f"out{extension}")
    if kind == "fifo":
        os.mkfifo(path)
        return path, "is a FIFO"
    if kind == "directory":
        os.mkdir(path)
        return path, "is a directory"
    if kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)  # the file stays after the socket is closed
        server.close()
        return path, "is a socket"
    if kind == "read_only_file":
        write(daxpy.UniformGrid(dims=(2,)), path)
        os.chmod(path, 0o444)
        return path, "read-only"
    if kind == "read_only_folder":
        inner = folder / "locked"
        inner.mkdir()
        os.chmod(inner, 0o555)
        return str(inner / f"out{extension}"), "is not writable"
    if kind == "missing_folder":
        return str(folder / "missing" / f"out{extension}"), "does not exist"
    if kind == "under_a_file":
        (folder / "plain").write_text("x")
        return str(folder / "plain" / f"out{extension}"), "Not a directory"
    if kind == "symlink_loop":
        os.symlink(path, path)
        return path, "Too many levels of symbolic links"
    if kind in ("dev_full", "dev_null"):
        return f"/dev/{kind[4:]}", "is a character device"
    raise AssertionError(kind)


KINDS = ["fifo", "directory", "socket", "read_only_file", "read_only_folder",
         "missing_folder", "under_a_file", "symlink_loop", "dev_full", "dev_null"]

CHILD = textwrap.dedent("""
    import signal, sys
    signal.alarm(30)  # a blocked open() would otherwise wait forever
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    import daxpy, daxpy.io.interop
    from daxpy.errors import DataFileError
    from daxpy.io import write
    from test_no_hang import make_target

    def computed(*_args):
        raise AssertionError("the dataset was converted before the target was checked")

    folder, extension = Path(sys.argv[2]), sys.argv[3]
    for kind in sys.argv[4:]:
        (folder / kind).mkdir()
        target, words = make_target(kind, folder / kind, extension)
        convert, daxpy.io.interop.to_vtk = daxpy.io.interop.to_vtk, computed
        try:
            write(daxpy.UniformGrid(dims=(2,)), target)
        except DataFileError as err:
            assert words in str(err) and repr(target) in str(err), str(err)
            print(kind, "refused:", err)
        daxpy.io.interop.to_vtk = convert
""")


@pytest.mark.parametrize("extension", EXTENSIONS)
def test_bad_targets_are_refused_before_computing(extension, tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", CHILD, os.path.dirname(__file__), str(tmp_path), extension,
         *KINDS], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == KINDS, done.stdout
    assert all(" refused: cannot write " in line for line in lines), done.stdout
    assert read(tmp_path / "read_only_file" / f"out{extension}").n_points == 2  # as it was


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from([k for k in KINDS if k != "fifo"]),
       extension=st.sampled_from([".vti", ".vtk"]))
def test_refusals_leave_the_folder_alone(kind, extension, tmp_path_factory):
    folder = tmp_path_factory.mktemp("case")
    target, words = make_target(kind, folder, extension)
    before = sorted(os.listdir(folder))
    with pytest.raises(DataFileError, match=words):
        check_output_target(target)
    with pytest.raises(DataFileError, match=words):
        write(daxpy.UniformGrid(dims=(2,), point_data={"t": np.zeros(2)}), target)
    assert sorted(os.listdir(folder)) == before


@pytest.mark.parametrize("path", [3, None, b"", "", "a\x00b.vti"])
def test_non_paths_are_argument_errors(path):
    with pytest.raises(ArgumentError, match="output path"):
        check_output_target(path)


def test_name_too_long_is_refused(tmp_path):
    with pytest.raises(DataFileError, match="File name too long"):
        check_output_target(tmp_path / ("x" * 300 + ".vti"))


def test_new_path_and_regular_file_are_accepted(tmp_path):
    new = tmp_path / "new.vti"
    assert check_output_target(new) == str(new)
    write(daxpy.UniformGrid(dims=(2,)), new)
    assert check_output_target(str(new)) == str(new)
    assert os.listdir(tmp_path) == ["new.vti"]


def test_dangling_symlink_is_written_through(tmp_path):
    (tmp_path / "link.vti").symlink_to(tmp_path / "real.vti")
    write(daxpy.UniformGrid(dims=(2,)), tmp_path / "link.vti")
    assert (tmp_path / "link.vti").is_symlink()
    assert stat.S_ISREG(os.stat(tmp_path / "real.vti").st_mode)


@pytest.mark.parametrize("kind", ["fifo", "dev_full"])
def test_cli_refuses_bad_output_without_hanging(kind, tmp_path):
    target, words = make_target(kind, tmp_path, ".vti")
    done = subprocess.run([sys.executable, "-m", "daxpy.cli", "run", "wavelet:8", target,
                           "--field", "RTData"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert words in done.stderr and "Traceback" not in done.stderr, done.stderr
