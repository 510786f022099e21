"""``daxpy bench``: seed 004's Dax study on this machine, tables and a plot.

Pass-through (float32 -> float64) and point gradient at 10M and 100M points on
a cube of side floor(N^(1/3)), as in seed 004, plus point-to-cell, and the same
on unstructured hexahedra (10M points by default: VTK's hexahedral gradient
alone takes tens of seconds at that size). Implementations, in the seed's
order (hand-tuned first, VTK last):

- ``hand-tuned``: one CUDA kernel per case, pageable copies in and out;
- ``daxpy``: the pipeline, host to host through the streaming transfer path;
- ``daxpy-specialized``: daxpy's generated kernel, pageable copies in and out;
- ``daxpy-generic``: switch-based kernels (the "unmodified Dax" analog);
- ``viskores``, ``vtk-stdthread``, ``vtk-seq``: on the CPU.

Every result is compared with every other before any time is printed; a
mismatch is an error naming the implementation. Reported: the total time
(host to host) and, for GPU implementations, the kernel time. Without a GPU the
CPU rows run and the GPU rows are marked absent. Writes, under
``benchmarks/results/<device>/``, ``dax_study.md`` (a header with device,
driver, CUDA, CuPy, VTK and core count, and the tables), ``dax_study.json`` and
``dax_study.png``; and ``benchmarks/results/dax_study-<device>.json``.
``--end-to-end`` also measures issue 5's rows (transfer floors, naive CuPy,
daxpy's transfer variants) in the same run and writes ``end_to_end``'s files.

Run: ``daxpy bench dax-study`` (from a checkout) or ``python -m benchmarks.dax_study``.

Examples
--------
>>> parse_args(["--sizes", "1e6"]).sizes
[1000000]
"""

from __future__ import annotations

import sys
import time

from .common import device_slug, output_dir, write_results
from .printout import exit_status
from .host_bench import Context, gpu_available, implementation_list, run_study
from .host_impls import CPU_IMPLS
from . import study_report
from .study_options import environment, parse_args, sizes_of

ORDER = ["hand-tuned", "daxpy", "daxpy-specialized", "daxpy-generic", "daxpy-cpu",
         "viskores", "vtk-stdthread", "vtk-seq"]
"""Seed 004's order: hand-tuned first, then Dax (modified, initial), VTK last;
daxpy's CPU backend sits with the CPU rows."""

SEED_2011 = {
    # Seed 004 (Tesla C2070, 2.66 GHz Xeon, 2011): (total ms, kernel ms).
    ("pass_through", 10_000_000): {"vtk-seq": (562, None), "daxpy-generic": (417, 4),
                                   "daxpy-specialized": (420, 4), "hand-tuned": (220, 5)},
    ("pass_through", 100_000_000): {"vtk-seq": (5539, None), "daxpy-generic": (4152, 49),
                                    "daxpy-specialized": (4153, 49),
                                    "hand-tuned": (2134, 56)},
    ("point_gradient", 10_000_000): {"vtk-seq": (10592, None), "daxpy-generic": (436, 50),
                                     "daxpy-specialized": (375, 27), "hand-tuned": (216, 5)},
    ("point_gradient", 100_000_000): {"vtk-seq": (106645, None),
                                      "daxpy-generic": (4309, 534),
                                      "daxpy-specialized": (3712, 307),
                                      "hand-tuned": (2158, 66)},
}
"""Seed 004's figures, quoted beside ours: its VTK, DAX (initial), DAX (modified)
and hand-tuned rows map to vtk-seq, daxpy-generic, daxpy-specialized, hand-tuned."""

SEED_NAMES = {"vtk-seq": "VTK", "daxpy-generic": "DAX (initial)",
              "daxpy-specialized": "DAX (modified)", "hand-tuned": "hand-tuned"}


def study_impls(case: str, kind: str, n: int) -> list:
    """The Dax study's implementations, in the seed's order."""
    return implementation_list(ORDER)


def main(argv=None) -> int:
    args = parse_args(argv)
    gpu = gpu_available()
    budget = args.time_budget or float("inf")
    ctx = Context(gpu=gpu, deadline=time.monotonic() + budget)
    plan = study_impls
    if args.end_to_end:
        from .end_to_end import e2e_impls

        def plan(case, kind, n):  # noqa: F811  (the union, measured once)
            # GPU rows first (the study's in the seed's order, then the end-to-end
            # ones), the CPU rows last, so a spent time budget skips CPU rows.
            study = study_impls(case, kind, n)
            seen = {(i, v) for i, v, _ in study}
            extra = [t for t in e2e_impls(case, kind, n, max(args.sizes))
                     if (t[0], t[1]) not in seen]
            everything = study + extra
            cpu = [t for t in everything if t[0] in CPU_IMPLS]
            return [t for t in everything if t not in cpu] + cpu

    if args.no_cpu:
        inner = plan

        def plan(case, kind, n):  # noqa: F811
            return [t for t in inner(case, kind, n) if not t[0] in CPU_IMPLS]

    header = environment(gpu)
    rows, failures = run_study(sizes_of(args), args.cases, plan, ctx, args.repeat, args.slow,
                               cpu_rows=not args.no_cpu)
    study_rows = [r for r in rows if r["impl"] in ORDER and not r.get("variant")]
    out_root = output_dir(args)
    out_dir = out_root / device_slug(gpu)
    study_report.write(out_dir, "dax_study", study_rows, header, SEED_2011, SEED_NAMES,
                       ORDER, command="daxpy bench dax-study " + " ".join(argv or sys.argv[1:]))
    write_results("dax_study", study_rows, folder=out_root, gpu=gpu, environment=header)
    if args.end_to_end:
        from .end_to_end import report as e2e_report

        e2e_report(rows, header, gpu, out_root)
    print((out_dir / "dax_study.md").read_text())
    return exit_status(failures)


if __name__ == "__main__":
    sys.exit(main())
