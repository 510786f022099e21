"""``daxpy bench SUITE`` at a tiny size on the CPU: the tables, the JSON and the plot."""

import argparse
import importlib
import json
from pathlib import Path

import pytest

from daxpy.cli import main
from daxpy.cli.bench import suite_module

pytest.importorskip("matplotlib")
pytest.importorskip("vtk")

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
ROW_KEYS = {"case", "grid", "dtype", "n_points", "impl", "time_ms", "agrees"}


@pytest.fixture(autouse=True)
def _checkout(monkeypatch):
    # The suites are found from any working directory (the GPU machine runs tests/).
    monkeypatch.setenv("DAXPY_CHECKOUT", str(BENCHMARKS.parent))


def _document(path):
    document = json.loads(path.read_text())
    assert {"benchmark", "date", "device", "host_cores", "versions", "rows"} <= set(document)
    assert set(document["versions"]) == {"daxpy", "cupy", "cuda", "vtk", "numpy"}
    for row in document["rows"]:
        assert ROW_KEYS <= set(row), row
        assert row["time_ms"] is None or row["time_ms"] >= 0
        assert (row["time_ms"] is None) == ("absent" in row), row
    return document


def _folder(tmp_path):
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return folder


def test_daxpy_bench_runs_the_dax_study_on_the_cpu(tmp_path, capsys):
    assert main(["bench", "dax-study", "--tiny", "--out", str(tmp_path)]) == 0
    folder = _folder(tmp_path)
    document = _document(folder / "dax_study.json")
    rows = document["rows"]
    assert {r["case"] for r in rows} == {"pass_through", "point_gradient", "point_to_cell"}
    assert {r["grid"] for r in rows} == {"uniform3d", "unstructured_hex"}
    by_impl = {r["impl"]: r for r in rows if r["case"] == "point_gradient"
               and r["grid"] == "uniform3d"}
    assert by_impl["vtk-seq"]["time_ms"] > 0 and by_impl["vtk-seq"]["agrees"] is True
    assert by_impl["vtk-stdthread"]["agrees"] is True
    from daxpy.engine.backend import cuda_available

    if not cuda_available():
        assert by_impl["hand-tuned"]["absent"] == "no GPU on this machine"
    # daxpy has a row on every machine: its CPU backend, against the same VTK rows.
    for row in (r for r in rows if r["impl"] == "daxpy-cpu"):
        assert row["time_ms"] > 0 and row["agrees"] is True, row
    assert len([r for r in rows if r["impl"] == "daxpy-cpu"]) == 6
    table = (folder / "dax_study.md").read_text()
    assert "| daxpy-cpu |" in table
    assert "| implementation | 4,096 points: total ms | kernel ms | agrees |" in table
    assert "### point gradient on uniform3d" in table and "Seed 004 (2011" in table
    assert "| vtk-seq |" in table and "CPU cores" in table
    assert (folder / "dax_study.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "dax study on" in capsys.readouterr().out


def test_daxpy_bench_bias_writes_the_seed_table(tmp_path, capsys):
    assert main(["bench", "bias", "--tiny", "--out", str(tmp_path)]) == 0
    folder = _folder(tmp_path)
    document = _document(folder / "bias_study.json")
    algorithms = [r["algorithm"] for r in document["rows"]]
    assert algorithms[:4] == ["Baseline", "Batched fetch", "Explicit bias cache",
                              "Batched fetch and explicit bias cache"]
    assert "daxpy (generated bias_add)" in algorithms
    numpy_row = document["rows"][-1]
    assert numpy_row["impl"] == "numpy" and numpy_row["agrees"] is True
    table = (folder / "bias_study.md").read_text()
    assert "| algorithm | impl | execution time, ns | relative execution time |" in table
    assert "47,416,329" in table
    assert (folder / "bias_study.png").stat().st_size > 1000
    capsys.readouterr()


def test_daxpy_bench_end_to_end_rows_and_goals(tmp_path, capsys):
    assert main(["bench", "dax-study", "--tiny", "--no-cpu", "--end-to-end",
                 "--out", str(tmp_path)]) == 0
    text = (_folder(tmp_path) / "end_to_end.md").read_text()
    assert "## Goals" in text and "overlapped floor" in text
    assert "gradient filter call" in text
    capsys.readouterr()


def test_the_end_to_end_goals_compare_a_first_run_of_hexahedra_with_a_warm_one():
    from benchmarks.end_to_end import goals

    row = dict(case="point_gradient", grid="unstructured_hex", n_points=1000, impl="daxpy",
               agrees=True)
    rows = [dict(row, grid="uniform3d", time_ms=1.0), dict(row, time_ms=2.0),
            dict(row, variant="first-run", time_ms=9.0)]
    (first,) = [g for g in goals(rows) if "first host->host run" in g["goal"]]
    assert (first["value"], first["met"]) == (4.5, False)


def test_the_end_to_end_suite_has_a_filter_call_row(tmp_path, capsys):
    assert main(["bench", "end-to-end", "--tiny", "--no-cpu", "--hex-sizes", "",
                 "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("end_to_end-*.json")
    impls = {r["impl"] for r in _document(path)["rows"]}
    assert {"daxpy", "daxpy-filter", "floor-overlapped"} <= impls
    capsys.readouterr()


def test_the_cpu_suite_writes_its_rows(tmp_path, capsys):
    assert main(["bench", "cpu", "--sizes", "2000", "--repeat", "1", "--grids", "uniform",
                 "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("cpu_vs_vtk-cpu-*core.json")
    rows = _document(path)["rows"]
    assert {"daxpy", "vtk-seq"} <= {r["impl"] for r in rows}
    assert all(r["agrees"] for r in rows if r["time_ms"] is not None)
    capsys.readouterr()


def test_the_cpu_fusion_suite_writes_its_rows(tmp_path, capsys):
    assert main(["bench", "cpu-fusion", "--points", "2000", "--repeat", "1",
                 "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("cpu_fusion-cpu-*core.json")
    rows = _document(path)["rows"]
    assert {(r["maps"], r["impl"], r["threads"]) for r in rows if "maps" in r} == {
        (m, impl, t) for m in (1, 3, 6) for impl in ("daxpy-serial", "daxpy-cpu")
        for t in (1, 2)}
    assert {r.get("phase") for r in rows if r["case"] == "map_chain_6_compile"} == \
        {"cold", "cached"}
    capsys.readouterr()


def test_the_geometry_suite_checks_every_case_against_vtk(tmp_path, capsys):
    assert main(["bench", "geometry", "--quick", "--out", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("geometry-cpu-*core.json")
    rows = _document(path)["rows"]
    assert {r["case"] for r in rows} == {"threshold", "clip_scalar", "clip_plane",
                                        "slice_plane"}
    assert {r["grid"] for r in rows} == {"uniform3d", "unstructured_hex"}
    assert {"daxpy-cpu", "vtk-seq", "vtk-stdthread"} <= {r["impl"] for r in rows}
    assert all(r["agrees"] and r["cells"] > 0 for r in rows)
    assert main(["bench", "geometry", "--cases", "cut"]) == 2
    capsys.readouterr()


def test_a_run_writes_to_the_user_folder_unless_saved(tmp_path, monkeypatch, capsys):
    suite_module("bias")  # the checkout's benchmarks package, wherever pytest runs from
    from benchmarks.common import RESULTS_DIR, output_dir

    monkeypatch.setenv("DAXPY_BENCH_DIR", str(tmp_path / "mine"))
    assert main(["bench", "bias", "--tiny"]) == 0
    assert (tmp_path / "mine").is_dir() and list((tmp_path / "mine").glob("bias_study-*.json"))
    assert f"wrote {tmp_path / 'mine'}" in capsys.readouterr().out
    saved = argparse.Namespace(out=None, save=True)
    assert output_dir(saved) == RESULTS_DIR == BENCHMARKS / "results"
    monkeypatch.delenv("DAXPY_BENCH_DIR")
    assert output_dir(argparse.Namespace(out=None, save=False)) == Path("daxpy-bench-results")


def test_daxpy_bench_lists_the_suites(capsys):
    assert main(["bench", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert {"kernels", "end-to-end", "pipelines", "cpu", "bias", "dax-study",
            "scale-out"} <= set(listed)


def test_an_unknown_suite_is_a_one_line_usage_error(capsys):
    assert main(["bench", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown suite 'nope'" in err and "kernels" in err


def test_a_gpu_suite_without_cupy_is_a_one_line_error(capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cupy", None)  # as on a machine without CuPy
    assert main(["bench", "kernels", "--quick"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs CuPy and a CUDA GPU" in err


def test_a_bad_suite_option_is_a_one_line_usage_error(capsys):
    assert main(["bench", "bias", "--nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "daxpy bench bias: unrecognized arguments: --nope" in err


@pytest.mark.parametrize("module", sorted(p.stem for p in BENCHMARKS.glob("*.py")))
def test_the_suites_docstring_examples_run(module):
    import doctest

    suite_module("bias")  # the checkout's benchmarks package
    try:
        found = importlib.import_module(f"benchmarks.{module}")
    except ModuleNotFoundError as err:
        pytest.skip(f"needs {err.name}")
    result = doctest.testmod(found, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_a_suite_help_goes_to_the_suite(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "kernels", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "daxpy bench kernels" in out and "--save" in out and "--quick" in out
