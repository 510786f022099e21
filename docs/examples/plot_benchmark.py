"""
Benchmark: seed 004's Dax study on an H200
==========================================

The committed results of ``daxpy bench dax-study --end-to-end --save`` (one
NVIDIA H200): the point gradient at 100M points, host to host, per
implementation.
"""

import json
from pathlib import Path

import matplotlib.pyplot as plt

here = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
results = here.parents[1] / "benchmarks" / "results" / "dax_study-nvidia-h200.json"
rows = [r for r in json.loads(results.read_text())["rows"]
        if r["case"] == "point_gradient" and r["grid"] == "uniform3d"
        and r["n_points"] > 50_000_000 and r.get("time_ms")]
rows.sort(key=lambda r: r["time_ms"])

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.barh([r["impl"] for r in rows], [r["time_ms"] for r in rows])
ax.set_xscale("log")
ax.invert_yaxis()
ax.set_xlabel("total time, ms (host to host, log scale)")
ax.set_title(f"point gradient on one NVIDIA H200, {rows[0]['n_points']:,} points")
fig.tight_layout()
plt.show()
