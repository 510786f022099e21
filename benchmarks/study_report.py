"""Tables, JSON and a bar chart for the study benchmarks (``daxpy bench``).

:func:`write` puts ``<name>.md``, ``<name>.json`` and ``<name>.png`` in a
folder (``benchmarks/results/<device>/``).
The Markdown has a header (device, driver, CUDA, CuPy, VTK, CPU, cores, the
command), one table per case and grid shaped like seed 004's (total and kernel
time per implementation and size), and the seed's own figures when given.

Examples
--------
>>> rows = [{"case": "pass_through", "grid": "uniform3d", "n_points": 8, "impl": "vtk-seq",
...          "time_ms": 2.0, "agrees": True}]
>>> print(case_tables(rows, ["vtk-seq"]).splitlines()[2])
| implementation | 8 points: total ms | kernel ms | agrees |
"""

from __future__ import annotations

import json
from pathlib import Path

HEADER_KEYS = [("device", "device"), ("driver", "driver"), ("cuda", "CUDA"),
               ("cupy", "CuPy"), ("vtk", "VTK"), ("numpy", "NumPy"), ("cpu", "CPU"),
               ("host_cores", "CPU cores"), ("date", "date")]


def _ms(value) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def header_table(header: dict, command: str) -> str:
    """The machine and versions as a one-row Markdown table, and the command.

    Examples
    --------
    >>> header_table({"device": None, "host_cores": 2}, "daxpy bench").splitlines()[4][:8]
    '| no GPU'
    """
    cells = []
    for key, _ in HEADER_KEYS:
        value = header.get(key)
        cells.append("no GPU" if key == "device" and value is None else
                     "" if value is None else str(value))
    titles = [title for _, title in HEADER_KEYS]
    return "\n".join([f"Command: `{command}`", "",
                      "| " + " | ".join(titles) + " |", "|" + " --- |" * len(titles),
                      "| " + " | ".join(cells) + " |"]).replace("|  |", "| |")


def case_tables(rows: list[dict], order: list[str]) -> str:
    """One table per (case, grid): implementations down, sizes across."""
    out = []
    groups: dict = {}
    for row in rows:
        groups.setdefault((row["case"], row["grid"]), []).append(row)
    for (case, grid), found in groups.items():
        sizes = sorted({r["n_points"] for r in found})
        titles = ["implementation"]
        for n in sizes:
            titles += [f"{n:,} points: total ms", "kernel ms"]
        titles.append("agrees")
        out += [f"### {case.replace('_', ' ')} on {grid}", "",
                "| " + " | ".join(titles) + " |", "|" + " --- |" * len(titles)]
        impls = [i for i in order if any(r["impl"] == i for r in found)]
        for impl in impls:
            cells, agrees = [impl], set()
            for n in sizes:
                row = next((r for r in found if r["impl"] == impl and r["n_points"] == n), None)
                if row is None or row.get("time_ms") is None:
                    why = (row or {}).get("absent", "not run")
                    cells += [f"absent ({why})", ""]
                    continue
                cells += [_ms(row["time_ms"]), _ms(row.get("kernel_ms"))]
                agrees.add(row.get("agrees"))
            cells.append("yes" if agrees == {True} else "NO" if False in agrees else "")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def seed_table(seed: dict, names: dict) -> str:
    """Seed 004's 2011 figures in the same shape (total and kernel ms)."""
    lines = ["### Seed 004 (2011: Tesla C2070, 2.66 GHz Xeon), for comparison", "",
             "| test | implementation (ours) | 10M: total ms | kernel ms | 100M: total ms | "
             "kernel ms |", "| --- | --- | --- | --- | --- | --- |"]
    for case in sorted({c for c, _ in seed}):
        for impl, seed_name in names.items():
            cells = [case.replace("_", " "), f"{seed_name} ({impl})"]
            for n in (10_000_000, 100_000_000):
                total, kernel = seed.get((case, n), {}).get(impl, (None, None))
                cells += [_ms(total), _ms(kernel)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], order: list[str], path: Path, title: str) -> None:
    """Bar chart: one panel per (case, grid, size), one bar per implementation,
    total time on a log axis with the kernel time drawn inside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict = {}
    for row in rows:
        groups.setdefault((row["case"], row["grid"], row["n_points"]), []).append(row)
    keys = sorted(groups, key=lambda k: (k[1], k[0], k[2]))
    cols = min(3, max(len(keys), 1))
    nrows = -(-max(len(keys), 1) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.4 * nrows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        found = {r["impl"]: r for r in groups[key]}
        impls = [i for i in order if i in found]
        totals = [found[i].get("time_ms") or float("nan") for i in impls]
        kernels = [found[i].get("kernel_ms") or float("nan") for i in impls]
        x = list(range(len(impls)))
        ax.bar(x, totals, color="#4c72b0", label="total (host to host)")
        ax.bar(x, kernels, width=0.5, color="#dd8452", label="kernel")
        positive = [v for v in totals + kernels if v == v and v > 0]
        for i, impl in enumerate(impls):
            if not found[impl].get("time_ms"):
                ax.text(i, 0.03, "absent", rotation=90, ha="center", va="bottom", fontsize=7,
                        transform=ax.get_xaxis_transform())
        ax.set_yscale("log")
        if positive:
            ax.set_ylim(min(positive) / 3, max(positive) * 3)
        ax.set_xlim(-0.6, len(impls) - 0.4)
        ax.set_xticks(x)
        ax.set_xticklabels(impls, rotation=40, ha="right", fontsize=8)
        ax.set_ylabel("ms (log)")
        ax.set_title(f"{key[0].replace('_', ' ')}, {key[1]}, {key[2]:,} pts", fontsize=9)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_json(out_dir: Path, name: str, rows: list[dict], header: dict, command: str) -> Path:
    """``<name>.json`` in DESIGN.md's results format, with the header and the command."""
    out_dir.mkdir(parents=True, exist_ok=True)
    versions = {k: header.get(k) for k in ("daxpy", "cupy", "cuda", "vtk", "numpy")}
    document = {"benchmark": name, "date": header.get("date"),
                "device": header.get("device") or f"CPU only ({header.get('cpu')})",
                "host_cores": header.get("host_cores"), "versions": versions,
                "environment": header, "command": command, "rows": rows}
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps(document, indent=1) + "\n")
    return path


def write(out_dir: Path, name: str, rows: list[dict], header: dict, seed: dict | None,
          seed_names: dict | None, order: list[str], command: str) -> Path:
    """Write ``<name>.md``, ``<name>.json`` and ``<name>.png`` into ``out_dir``."""
    write_json(out_dir, name, rows, header, command)
    device = header.get("device") or f"CPU only ({header.get('cpu')})"
    text = [f"# {name.replace('_', ' ')} on {device}, {header.get('date')}", "",
            header_table(header, command), "", case_tables(rows, order)]
    if seed:
        text.append(seed_table(seed, seed_names))
    (out_dir / f"{name}.md").write_text("\n".join(text))
    plot(rows, order, out_dir / f"{name}.png", f"{name.replace('_', ' ')}: {device}")
    return out_dir
