"""What a suite prints: Markdown tables, speed-ups over a baseline, and its
exit status from the results that did not agree.

Examples
--------
>>> print(format_table([{"case": "bias_add", "time_ms": 2.0}], ["case", "time_ms"]))
| case | time_ms |
| --- | --- |
| bias_add | 2 |
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def format_table(rows: Sequence[dict], columns: Sequence[str]) -> str:
    """Render rows as a Markdown table (missing keys left blank).

    Examples
    --------
    >>> print(format_table([{"a": 1, "b": 2.5}], ["a", "b"]))
    | a | b |
    | --- | --- |
    | 1 | 2.5 |
    """
    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"
        return str(value)

    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(cell(row.get(c)) for c in columns) + " |")
    return "\n".join(lines)


def summarize(rows: Iterable[dict], baseline: str, impls: Sequence[str]) -> list[dict]:
    """One line per (case, grid, n_points): each impl's time and speed-up over ``baseline``.

    Examples
    --------
    >>> rows = [{"case": "c", "grid": "g", "n_points": 1, "impl": impl, "time_ms": ms}
    ...         for impl, ms in (("vtk-seq", 10.0), ("daxpy", 2.0))]
    >>> summarize(rows, "vtk-seq", ["daxpy"])[0]["daxpy_x"]
    5.0
    """
    lines: dict[tuple, dict] = {}
    for row in rows:
        key = (row["case"], row["grid"], row["n_points"])
        line = lines.setdefault(key, {"case": key[0], "grid": key[1], "n_points": key[2]})
        line[row["impl"]] = row["time_ms"]
    for line in lines.values():
        base = line.get(baseline)
        for impl in impls:
            if base and line.get(impl):
                line[f"{impl}_x"] = round(base / line[impl], 2)
    return list(lines.values())


def exit_status(failures: Sequence[str], label: str = "MISMATCH") -> int:
    """Print each failure after ``label``; the suite's exit status (1 if any).

    Examples
    --------
    >>> exit_status(["numpy disagrees"], "FAILED"), exit_status([])
    FAILED: numpy disagrees
    (1, 0)
    """
    for failure in failures:
        print(f"{label}:", failure)
    return 1 if failures else 0
