"""The command line never prints a traceback and never hangs (issue 11, items 4 and 5).

Every error path ends in one line on stderr, ``daxpy COMMAND: error: ...``,
with status 2 for a usage error and 1 for a runtime error. Paths that could
hang, crash or allocate run the CLI in a child process, under a timeout and a
memory limit; the quick ones call :func:`daxpy.cli.main` in this process.
"""

import contextlib
import io
import os
import resource
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("vtk")

import daxpy.cli.run  # noqa: E402
import daxpy.cli.demo  # noqa: E402
from daxpy.cli import main  # noqa: E402
from daxpy.cli.args import VERBS  # noqa: E402
from daxpy.errors import ResourceError  # noqa: E402
from daxpy.io import read  # noqa: E402
from daxpy.data.memory_budget import available_bytes, require_bytes  # noqa: E402

CHILD_MEMORY = 4 << 30  # RLIMIT_AS of a child: a real allocation of the sizes tried fails
IS_ROOT = os.geteuid() == 0


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def _child(*argv, timeout=60, stdout=subprocess.PIPE, cwd=None, env=None):
    """Run ``python -m daxpy.cli ARGV`` under the memory limit; its result and wall time."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "daxpy.cli", *argv], stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=timeout, cwd=cwd,
                          env=env, preexec_fn=_limit_memory)
    return done, time.monotonic() - start


def _in_process(argv, env_traceback=False):
    """Run ``main(argv)`` here; its status, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _assert_one_line(status, out, err, expected, *words):
    assert status == expected, (status, out, err)
    assert "Traceback" not in out + err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("daxpy") and ": error: " in lines[0], err
    assert "internal error" not in lines[0] and "[Errno None]" not in lines[0], err
    for word in words:
        assert word in lines[0], (word, err)


RUN = ["run", "wavelet:6", "--field", "RTData"]


def _run_into(target, *more):
    """RUN writing ``target`` (argparse takes the output right after the input)."""
    return RUN[:2] + [os.fspath(target)] + RUN[2:] + list(more)


USAGE_ERRORS = [
    (["run", "wavelet:abc", "--field", "RTData"], "wavelet:SIZE"),
    (["run", "wavelet:-3", "--field", "RTData"], "'-3'"),
    (["run", "wavelet:0", "--field", "RTData"], "'0'"),
    (["run", "wavelet:", "--field", "RTData"], "wavelet:SIZE"),
    (["run", "wavelet:" + "9" * 5000, "--field", "RTData"], "wavelet:SIZE"),
    (["run", "", "--field", "RTData"], "argument input"),
    *((RUN + ["--step", step], word) for step, word in [
        ("bias_add=1,abc", "bias_add"),
        ("bias_add=", "bias_add needs an argument"),
        ("bias_add", "bias_add needs an argument"),
        ("map=", "map needs an argument"),
        ("map=x+", "x+"),
        ("map=__import__('os')", "__import__"),
        ("map=y * 2", "'y'"),
        ("blur", "the verb must be one of"),
        ("gradient=sideways", "gradient takes"),
        ("magnitude=1", "takes no argument"),
        ("pass_through=notatype", "notatype"),
        ("cell_to_point", "RTData")]),
    (["run", "wavelet:6", "--field", "Nope", "--step", "magnitude"], "'Nope'"),
    (["run", "wavelet:6", "--field", "Nope"], "'Nope'"),
    *((RUN + [option, value], word) for option, value, word in [
        ("--pieces", "-1", "--pieces"),
        ("--pieces", "x", "--pieces"),
        ("--dask", "", "--dask"),
        ("--dask-timeout", "0", "--dask-timeout"),
        ("--dask-timeout", "nan", "--dask-timeout"),
        ("--dask", "foo://bar", "foo://bar"),
        ("--dask", "no-port-here", "no-port-here")]),
    (["run", "wavelet:6"], "--field"),
    (["run", "wavelet:100000", "out.png", "--field", "RTData"], "'.png'"),
    (["run", "wavelet:100000", "out.vtr", "--field", "RTData"], "use .vti or .vtk"),
    (["demo", "--size", "abc"], "--size"),
    (["demo", "--size", "1"], "--size"),
    (["demo", "--backend", "gpu"], "--backend"),
    (["source", "gradient", "--dtype", "foo"], "--dtype"),
    (["source", "gradient", "--components", "0"], "--components"),
    (["source", "nope"], "'nope'"),
    (["source", "gradient", "--param", "bias=[1,2]"], "bias"),
    ([], "COMMAND"),
    (["nonsense"], "nonsense"),
    (RUN + ["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
]


@pytest.mark.parametrize("argv, word", USAGE_ERRORS)
def test_usage_errors_are_one_line_with_status_2(argv, word):
    _assert_one_line(*_in_process(argv), 2, word)


def test_a_bad_dask_address_leaves_dasks_scheduler_as_it_was():
    dask = pytest.importorskip("dask")
    pytest.importorskip("distributed")
    before = dask.config.get("scheduler", None)
    _assert_one_line(*_in_process(RUN + ["--dask", "foo://bar"]), 2, "foo://bar")
    assert dask.config.get("scheduler", None) == before


def test_usage_errors_are_found_before_a_huge_input_is_built():
    # The chain is checked on a tiny stand-in: a typo costs no allocation.
    status, _, err = _in_process(["run", "wavelet:100000", "--field", "RTData", "--step",
                                  "map=y"])
    _assert_one_line(status, "", err, 2, "'y'")


def _corrupt_inputs(folder):
    """Broken inputs: missing, not a file, garbage, truncated and byte-flipped files."""
    (folder / "folder.vti").mkdir()
    (folder / "garbage.vti").write_bytes(b"\x00\xff not xml at all")
    rng = np.random.default_rng(0)
    (folder / "random.vtk").write_bytes(rng.bytes(300))
    paths = [folder / "missing.vti", folder / "folder.vti", folder / "garbage.vti",
             folder / "random.vtk"]
    for extension in (".vti", ".vtk"):
        whole_path = folder / f"whole{extension}"
        assert main(["run", "wavelet:6", str(whole_path), "--field", "RTData"]) == 0
        whole = whole_path.read_bytes()
        cut = folder / f"cut{extension}"
        cut.write_bytes(whole[: len(whole) // 2])
        flipped = bytearray(whole)
        for at in rng.integers(0, len(whole), 8):
            flipped[at] ^= 0xFF
        (folder / f"flipped{extension}").write_bytes(bytes(flipped))
        paths += [cut, folder / f"flipped{extension}"]
    return paths


def test_corrupt_and_missing_inputs_are_runtime_errors(tmp_path):
    # In a child each: a corrupt file must not take the test run down with it.
    for path in _corrupt_inputs(tmp_path):
        done, _ = _child("run", str(path), "--field", "RTData")
        if "flipped" in path.name and done.returncode != 1:
            # Flips inside values leave a readable file; flips in a name lose the field.
            assert "Traceback" not in done.stdout + done.stderr
            assert done.returncode == 0 or "'RTData'" in done.stderr
            continue
        _assert_one_line(done.returncode, done.stdout, done.stderr, 1, repr(str(path)))


@pytest.mark.skipif(IS_ROOT, reason="root reads files whatever their mode")
def test_unreadable_input_is_a_runtime_error(tmp_path):
    path = tmp_path / "secret.vti"
    assert main(["run", "wavelet:4", str(path), "--field", "RTData"]) == 0
    path.chmod(0)
    _assert_one_line(*_in_process(["run", str(path), "--field", "RTData"]), 1, "secret.vti")


def _bad_targets(tmp_path):
    (tmp_path / "folder.vti").mkdir()
    targets = {"missing folder": tmp_path / "no" / "such" / "out.vti",
               "directory": tmp_path / "folder.vti",
               "device": "/dev/full", "null device": "/dev/null"}
    if not IS_ROOT:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
        targets["read-only folder"] = locked / "out.vti"
    return targets


def test_bad_output_targets_are_refused_before_computing(tmp_path):
    for name, target in _bad_targets(tmp_path).items():
        status, out, err = _in_process(_run_into(target, "--step", "magnitude"))
        _assert_one_line(status, out, err, 1, os.fspath(target))
        assert "step(s) on" not in out, name  # nothing was computed


def test_read_only_target_under_proc_sys_is_refused():
    # Writable by nobody through a rename, root included.
    _assert_one_line(*_in_process(_run_into("/proc/sys/kernel/out.vti")), 1, "/proc/sys")


def test_fifo_output_is_refused_promptly(tmp_path):
    fifo = tmp_path / "fifo.vti"
    os.mkfifo(fifo)
    done, seconds = _child("run", "wavelet:8", str(fifo), "--field", "RTData", timeout=60)
    _assert_one_line(done.returncode, done.stdout, done.stderr, 1, str(fifo))
    assert seconds < 30


def test_float16_result_is_written_or_refused_on_one_line(tmp_path):
    target = tmp_path / "half.vti"
    status, out, err = _in_process(_run_into(target, "--step", "pass_through=float16"))
    if status:
        _assert_one_line(status, out, err, status, "float16")
        assert status in (1, 2) and not target.exists()
    else:
        assert "float16" in out and read(target).point_data.keys()


@pytest.mark.parametrize("argv", [
    ["run", "wavelet:100000", "--field", "RTData", "--step", "gradient"],
    ["run", "wavelet:3000", "--field", "RTData"],
    ["run", "wavelet:" + "9" * 40, "--field", "RTData"],
    ["demo", "--size", "100000", "--no-render"],
    ["demo", "--size", "3000", "--no-render"],
])
def test_sizes_beyond_memory_are_refused_before_allocating(argv, tmp_path):
    done, _ = _child(*argv, cwd=tmp_path)
    _assert_one_line(done.returncode, done.stdout, done.stderr, 1, "bytes", "available")
    assert not list(tmp_path.iterdir())  # the demo made no folder either


def test_memory_limit_of_the_process_counts():
    # 600^3 points fit in this machine's memory, not under a 4 GiB RLIMIT_AS.
    done, _ = _child("run", "wavelet:600", "--field", "RTData", "--step", "gradient")
    _assert_one_line(done.returncode, done.stdout, done.stderr, 1, "RLIMIT_AS")


def test_wavelet_api_refuses_with_resource_error():
    code = ("import daxpy.cli.demo, daxpy.errors\n"
            "try:\n    daxpy.cli.demo.wavelet(100000)\n"
            "except daxpy.errors.ResourceError as err:\n    print('refused:', err)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, preexec_fn=_limit_memory)
    assert done.returncode == 0 and done.stdout.startswith("refused: wavelet(100000) needs")


def test_require_bytes_names_what_and_both_sizes():
    available, _ = available_bytes()
    require_bytes(min(available, 1 << 20), "a small request")
    with pytest.raises(ResourceError, match=r"^the thing needs [\d,]+ bytes .* but only"):
        require_bytes(available + 1, "the thing")
    assert isinstance(ResourceError("x"), MemoryError)


def test_unreachable_dask_scheduler_fails_quickly_naming_it():
    pytest.importorskip("distributed")
    done, seconds = _child(*RUN, "--dask", "tcp://127.0.0.1:1", "--dask-timeout", "2")
    _assert_one_line(done.returncode, done.stdout, done.stderr, 1, "tcp://127.0.0.1:1",
                     "--dask-timeout")
    assert seconds < 20


def test_ctrl_c_while_connecting_is_one_line():
    pytest.importorskip("distributed")
    child = subprocess.Popen([sys.executable, "-m", "daxpy.cli", *RUN, "--dask",
                              "tcp://127.0.0.1:1", "--dask-timeout", "60"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=_limit_memory)
    time.sleep(3)  # past the imports, into the connection attempts
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert (child.returncode, out, err) == (130, "", "daxpy run: interrupted\n")


def test_closed_pipe_exits_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: `| head -0`
    try:
        done, _ = _child("source", "gradient", stdout=write_end)
    finally:
        os.close(write_end)
    assert done.returncode == 141
    assert done.stderr == ""


def test_interrupt_and_bugs_are_one_line(monkeypatch):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(daxpy.cli.run, "_load", interrupted)
    status, _, err = _in_process(RUN)
    assert (status, err) == (130, "daxpy run: interrupted\n")

    def buggy(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(daxpy.cli.run, "_load", buggy)
    status, out, err = _in_process(RUN)
    assert status == 1 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "internal error (a bug in daxpy): RuntimeError: boom" in err
    assert "--traceback" in err


@pytest.mark.parametrize("where", ["before", "after", "env"])
def test_traceback_on_request(where, monkeypatch):
    def buggy(args):
        raise RuntimeError("boom")

    monkeypatch.setattr(daxpy.cli.run, "_load", buggy)
    argv = {"before": ["--traceback"] + RUN, "after": RUN + ["--traceback"], "env": RUN}[where]
    if where == "env":
        monkeypatch.setenv("DAXPY_TRACEBACK", "1")
    status, _, err = _in_process(argv)
    assert status == 1 and "Traceback (most recent call last)" in err
    assert err.splitlines()[-1].startswith("daxpy run: error: internal error")


def test_no_step_passes_the_field_through(tmp_path):
    target = tmp_path / "same.vti"
    status, out, err = _in_process(["run", "wavelet:6", str(target), "--field", "RTData"])
    assert (status, err) == (0, "")
    assert "0 step(s)" in out and "RTData: points, float32, shape (216,)" in out
    np.testing.assert_array_equal(read(target).point_data["RTData"],
                                  daxpy.cli.demo.wavelet(6).point_data["RTData"])


_TOKENS = ["run", "source", "wavelet:3", "wavelet:x", "wavelet:-1", "in.vti", "--field",
           "RTData", "x", "--step", "--pieces", "-1", "3", "--dask", "nowhere", "--backend",
           "cpu", "cuda", "--grid", "uniform2d", "--dtype", "float64", "--components",
           "--param", "bias=[1]", "gradient", "map", "=", ",", "--traceback", ""]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=8))
def test_random_argument_vectors_never_give_a_traceback(argv):
    try:
        status, out, err = _in_process(argv)
    except SystemExit as done:  # --help or --version only
        assert done.code == 0
        return
    if "--traceback" in argv:
        return  # the trace was asked for
    assert status in (0, 1, 2), (argv, err)
    assert "Traceback" not in out + err
    assert "internal error" not in err, (argv, err)
    assert len(err.splitlines()) == (status != 0), (argv, err)


_STEP_TEXT = st.one_of(
    st.builds(lambda verb, eq, arg: verb + eq + arg, st.sampled_from(VERBS + ("", "blur")),
              st.sampled_from(["", "="]),
              st.one_of(st.text(max_size=12),
                        st.sampled_from(["x*2", "sin(x)", "cell", "point", "float64",
                                         "1,2", "1,,2", "nan", "1e999", "x/0", "int8"]))),
    st.text(max_size=16))


@settings(max_examples=60, deadline=None)
@given(st.lists(_STEP_TEXT, max_size=3), st.sampled_from(["RTData", "Nope", ""]))
def test_random_steps_never_give_a_traceback(steps, field):
    argv = ["run", "wavelet:4", "--field", field, "--backend", "cpu"]
    for step in steps:
        argv += ["--step", step]
    status, out, err = _in_process(argv)
    assert status in (0, 1, 2), (argv, err)
    assert "Traceback" not in out + err
    assert "internal error" not in err, (argv, err)
    assert len(err.splitlines()) == (status != 0), (argv, err)
