"""Numba's disk cache of daxpy's kernels (worklets/_kernel_cache.py): a kernel whose
helper in another module changed is compiled again, not loaded from the cache with
the old helper inlined (a silent wrong answer after an upgrade that changed only
a helper)."""

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")

_RUN = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from daxpy.worklets._kernel_cache import guard
    assert guard({package!r})
    from probe.kernel import twice_helper
    print(twice_helper(1.0))
""")


def _write(path, text):
    with open(path, "w") as source:
        source.write(textwrap.dedent(text))


def _run(root, package):
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    done = subprocess.run([sys.executable, "-c", _RUN.format(root=str(root), package=package)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_kernel_is_compiled_again_when_only_its_helper_changed(tmp_path):
    package = tmp_path / "probe"
    package.mkdir()
    _write(package / "__init__.py", "")
    _write(package / "helper.py", """
        from numba import njit

        @njit
        def helper(x):
            return x + 1.0
    """)
    _write(package / "kernel.py", """
        from numba import njit
        from .helper import helper

        @njit(cache=True)
        def twice_helper(x):
            return 2.0 * helper(x)
    """)
    assert _run(tmp_path, str(package)) == "4.0"
    assert _run(tmp_path, str(package)) == "4.0"   # from the cache
    assert any(name.endswith(".nbi") for name in os.listdir(package / "__pycache__"))
    _write(package / "helper.py", """
        from numba import njit

        @njit
        def helper(x):
            return x + 2.0
    """)
    assert _run(tmp_path, str(package)) == "6.0"


def test_daxpy_kernels_keep_the_disk_cache():
    from daxpy.worklets._contour_march_cpu import _march

    assert type(_march._cache).__name__ != "NullCache"
