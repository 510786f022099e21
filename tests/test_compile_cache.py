"""The on-disk kernel cache, without a GPU: NVRTC and the driver are replaced by
stand-ins, everything else (keys, files, checksums, recovery, concurrent
writers) is the real code.
"""

import multiprocessing
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daxpy.cuda import compile as cc


def _fake_binary(source: str, name: str) -> bytes:
    return f"CUBIN[{name}]".encode() + source.encode()


@pytest.fixture
def fake_nvrtc(tmp_path, monkeypatch):
    """get_kernel with a fake compiler and loader; the cache lives in tmp_path."""
    monkeypatch.setenv("DAXPY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cc, "_device_info", lambda: ((12, 8), "90"))
    monkeypatch.setattr(cc, "nvrtc_compile",
                        lambda source, name, arch: (_fake_binary(source, name), "cubin"))
    # The loader checks the entry exactly as the real one does, then "loads" it.
    monkeypatch.setattr(cc, "_load", lambda path, name: cc.unpack_entry(path.read_bytes()))
    cc.clear_memory_cache()
    yield tmp_path / "kernels"
    cc.clear_memory_cache()


def _counts():
    return cc.STATS["compiled"], cc.STATS["disk_hits"], cc.STATS["memory_hits"]


def test_cache_dir_is_the_users_and_can_be_overridden(monkeypatch, tmp_path):
    monkeypatch.delenv("DAXPY_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cc.cache_dir() == Path.home() / ".cache" / "daxpy" / "kernels"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cc.cache_dir() == tmp_path / "xdg" / "daxpy" / "kernels"
    monkeypatch.setenv("DAXPY_CACHE_DIR", str(tmp_path / "mine"))
    assert cc.cache_dir() == tmp_path / "mine" / "kernels"


def test_key_depends_on_source_cuda_version_and_arch():
    base = cc.cache_key("k__f32", "src", (12, 8), "90")
    assert base == cc.cache_key("k__f32", "src", (12, 8), "90")
    others = {cc.cache_key("k__f32", "src2", (12, 8), "90"),
              cc.cache_key("k__f32", "src", (13, 0), "90"),
              cc.cache_key("k__f32", "src", (12, 8), "80"),
              cc.cache_key("k__f64", "src", (12, 8), "90")}
    assert base not in others and len(others) == 4
    assert base.startswith("k__f32-")


def test_compile_once_then_disk_then_memory(fake_nvrtc):
    compiled, disk, memory = _counts()
    assert cc.get_kernel("k", "source A") == _fake_binary("source A", "k")
    assert _counts() == (compiled + 1, disk, memory)
    (entry,) = fake_nvrtc.iterdir()
    assert cc.unpack_entry(entry.read_bytes()) == _fake_binary("source A", "k")
    cc.clear_memory_cache()
    cc.get_kernel("k", "source A")
    assert _counts() == (compiled + 1, disk + 1, memory)
    cc.get_kernel("k", "source A")
    assert _counts() == (compiled + 1, disk + 1, memory + 1)
    cc.get_kernel("k", "source B")  # a changed template is a new entry
    assert _counts()[0] == compiled + 2 and len(list(fake_nvrtc.iterdir())) == 2


CORRUPTIONS = {
    "empty": lambda data, n: b"",
    "garbage": lambda data, n: os.urandom(max(n % 200, 1)),
    "truncated": lambda data, n: data[:n % len(data)],
    "bit flip": lambda data, n: data[:n % len(data)] + bytes([data[n % len(data)] ^ 0x10])
    + data[n % len(data) + 1:],
    "old format (bare binary)": lambda data, n: cc.unpack_entry(data),
    "appended": lambda data, n: data + b"\0" * (n % 7 + 1),
}


@settings(max_examples=120, deadline=None)
@given(kind=st.sampled_from(sorted(CORRUPTIONS)), n=st.integers(0, 10_000))
def test_corrupted_entry_is_rebuilt_with_a_warning(tmp_path_factory, kind, n):
    directory = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("DAXPY_CACHE_DIR", str(directory))
        monkeypatch.setattr(cc, "_device_info", lambda: ((12, 8), "90"))
        monkeypatch.setattr(cc, "nvrtc_compile",
                            lambda source, name, arch: (_fake_binary(source, name), "cubin"))
        monkeypatch.setattr(cc, "_load", lambda path, name: cc.unpack_entry(path.read_bytes()))
        _corrupt_and_rebuild(directory, kind, n)


def _corrupt_and_rebuild(directory, kind, n):
    cc.clear_memory_cache()
    cc.get_kernel("k", "source")
    (entry,) = (directory / "kernels").iterdir()
    entry.write_bytes(CORRUPTIONS[kind](entry.read_bytes(), n))
    cc.clear_memory_cache()
    compiled = cc.STATS["compiled"]
    with pytest.warns(RuntimeWarning, match="recompiling"):
        assert cc.get_kernel("k", "source") == _fake_binary("source", "k")
    assert cc.STATS["compiled"] == compiled + 1
    assert cc.unpack_entry(entry.read_bytes()) == _fake_binary("source", "k")
    cc.clear_memory_cache()


def test_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(cc.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        cc.write_atomically(tmp_path / "k.cubin", b"data")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs file permissions that apply (not root)")
def test_read_only_cache_dir_still_runs(fake_nvrtc):
    fake_nvrtc.mkdir(parents=True)
    fake_nvrtc.chmod(0o500)
    try:
        assert cc.get_kernel("k", "src") == _fake_binary("src", "k")
    finally:
        fake_nvrtc.chmod(0o700)


# -- processes writing one entry at once ----------------------------------------

def _payload(writer: int, round_: int) -> bytes:
    # Large enough that writes take several system calls and interleave.
    return bytes([writer, round_ % 256]) * (512 * 1024 + 97 * writer)


def _writer(path: str, writer: int, rounds: int) -> None:
    for round_ in range(rounds):
        cc.write_atomically(Path(path), cc.pack_entry(_payload(writer, round_)))


def _reader(path: str, reads: int, queue) -> None:
    seen, target = 0, Path(path)
    for _ in range(reads):
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            continue
        binary = cc.unpack_entry(data)  # raises on a torn or mixed entry
        assert binary[:2] * (len(binary) // 2) == binary
        seen += 1
    queue.put(seen)


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def test_concurrent_writers_never_corrupt_an_entry(tmp_path):
    ctx = _context()
    path = str(tmp_path / "kernels" / "k__f32-0123456789abcdef.cubin")
    queue = ctx.Queue()
    writers = [ctx.Process(target=_writer, args=(path, w, 25)) for w in range(4)]
    readers = [ctx.Process(target=_reader, args=(path, 300, queue)) for _ in range(2)]
    for process in writers + readers:
        process.start()
    for process in writers + readers:
        process.join(120)
        assert process.exitcode == 0, "a writer or a reader failed (torn entry?)"
    assert sum(queue.get(timeout=10) for _ in readers) > 0
    binary = cc.unpack_entry(Path(path).read_bytes())
    assert binary in {_payload(w, 24) for w in range(4)}
    assert [p.name for p in Path(path).parent.iterdir()] == [Path(path).name]


def _compile_in_child(directory: str, queue) -> None:
    os.environ["DAXPY_CACHE_DIR"] = directory
    cc._device_info = lambda: ((12, 8), "90")
    cc.nvrtc_compile = lambda source, name, arch: (_fake_binary(source, name) * 50000, "cubin")
    cc._load = lambda path, name: cc.unpack_entry(path.read_bytes())
    cc.clear_memory_cache()
    queue.put(cc.get_kernel("shared__f64", "the same source") ==
              _fake_binary("the same source", "shared__f64") * 50000)


def test_processes_compiling_the_same_kernel_at_once(tmp_path):
    ctx = _context()
    queue = ctx.Queue()
    processes = [ctx.Process(target=_compile_in_child, args=(str(tmp_path), queue))
                 for _ in range(6)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0
    assert all(queue.get(timeout=10) for _ in processes)
    (entry,) = (tmp_path / "kernels").iterdir()
    assert cc.unpack_entry(entry.read_bytes()).startswith(b"CUBIN[shared__f64]")
