"""Before/after: the rows two runs of one suite share, new time over old, as a Markdown table.

Run: ``python -m benchmarks.compare OLD.json NEW.json [MORE_NEW.json ...]
[--metric time_ms] [--slower 1.03]``. A row is keyed by case, grid, size, dtype,
implementation and variant; with several NEW files (runs of the same tree in the
same session) each row's ratio uses their median, and the table shows the spread
too, so that run-to-run noise is seen next to any change. Rows over ``--slower``
are flagged.

Examples
--------
>>> old = {"rows": [{"case": "c", "impl": "daxpy", "time_ms": 2.0}]}
>>> new = {"rows": [{"case": "c", "impl": "daxpy", "time_ms": 2.2}]}
>>> print(compare_table(old, [new]).splitlines()[-1])
| c |  |  | daxpy |  | 2 | 2.2 | 2.2 | 1.1 | slower |
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from .printout import format_table

_KEY = ("case", "grid", "n_points", "dtype", "impl", "variant")


def _key(row: dict) -> tuple:
    return tuple(row.get(name) for name in _KEY)


def compare_table(old: dict, news: list[dict], metric: str = "time_ms",
                  slower: float = 1.03) -> str:
    """The Markdown table of :func:`compare_rows`.

    Examples
    --------
    >>> compare_table({"rows": []}, [{"rows": []}]).splitlines()[0].split(" | ")[:3]
    ['| case', 'grid', 'n_points']
    """
    columns = ["case", "grid", "n_points", "impl", "variant", "old", "new", "new_range",
               "ratio", "flag"]
    return format_table(compare_rows(old, news, metric, slower), columns)


def compare_rows(old: dict, news: list[dict], metric: str = "time_ms",
                 slower: float = 1.03) -> list[dict]:
    """One dict per row present in ``old`` and in every one of ``news`` with a value.

    Examples
    --------
    >>> row = {"case": "c", "impl": "x", "time_ms": 4.0}
    >>> compare_rows({"rows": [row]}, [{"rows": [dict(row, time_ms=3.0)]}])[0]["ratio"]
    0.75
    """
    before = {_key(r): r.get(metric) for r in old["rows"]}
    after = [{_key(r): r.get(metric) for r in new["rows"]} for new in news]
    rows = []
    for key, was in before.items():
        values = [run.get(key) for run in after]
        if not was or not all(values):
            continue
        now = statistics.median(values)
        ratio = round(now / was, 3)
        rows.append({**dict(zip(_KEY, key)), "old": was, "new": now,
                     "new_range": f"{min(values):.4g}" if len(values) == 1
                     else f"{min(values):.4g}-{max(values):.4g}",
                     "ratio": ratio, "flag": "slower" if ratio > slower else ""})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the table; exit 0 (the table is for reading, not a gate)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("old")
    parser.add_argument("new", nargs="+")
    parser.add_argument("--metric", default="time_ms")
    parser.add_argument("--slower", type=float, default=1.03)
    args = parser.parse_args(argv)
    with open(args.old) as f:
        old = json.load(f)
    news = []
    for path in args.new:
        with open(path) as f:
            news.append(json.load(f))
    print(compare_table(old, news, args.metric, args.slower))
    return 0


if __name__ == "__main__":
    sys.exit(main())
