"""The README's Python examples run as written (in order, in one namespace).

Blocks that name the CUDA backend run only where a GPU is; the rest run in CI.
"""

import re
from pathlib import Path

import pytest

from daxpy.engine.backend import cuda_available

README = Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 3


def test_readme_examples_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples write files
    namespace: dict = {}
    ran = 0
    for block in BLOCKS:
        if 'backend="cuda"' in block and not cuda_available():
            continue
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - our own README
        ran += 1
    assert ran >= 2
    if "speeds" in namespace:  # the Dask example: equal to the single-domain run
        import daxpy

        grid = namespace["grid"]
        single = daxpy.pipeline(grid.with_fields(point_data={"p": grid.points()[:, 0] ** 2}))
        node = single.gradient("p").magnitude()
        expected = single.run(backend="cpu").point_data[node.name]
        assert (namespace["speeds"].ravel() == expected.ravel()).all()
    else:
        pytest.fail("the README's Dask example did not run")
