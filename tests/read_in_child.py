"""Read many files with ``daxpy.io.read`` in child processes, under a memory
limit and a timeout, and report each file's outcome.

A file that crashes the reader (a signal, ``std::bad_alloc``'s abort) or hangs
kills only the child: the child logs each file before reading it, so the
parent knows which one did it, and reads the rest in a fresh child.

Outcomes: ``"ok <geometry> <field>..."`` (a dataset whose fields fit its
counts, with a digest of its type, counts and points, then one per field),
``"refused
<DaxpyError subclass>: message"``, ``"RAW <type>: message"`` (any other
exception), ``"inconsistent: ..."``, ``"CRASH ..."`` or ``"HANG"``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, Phase, settings

MEMORY_LIMIT = 2 << 30
"""RLIMIT_AS of the child: VTK, NumPy and daxpy need about 0.3 GiB of it."""

_CHILD = r"""
import json, resource, sys
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
import daxpy.io
from daxpy.errors import DaxpyError

def digest(grid):
    import hashlib, numpy as np
    def short(*parts):
        h = hashlib.sha256()
        for part in parts:
            h.update(part if isinstance(part, bytes) else repr(part).encode())
        return h.hexdigest()[:12]
    words = [short(type(grid).__name__, grid.n_points, grid.n_cells,
                   np.ascontiguousarray(grid.points(), dtype=np.float64).tobytes())]
    for association in ("points", "cells"):
        for name, values in sorted(grid.fields(association).items()):
            words.append(association[0] + ":" + short(name, values.dtype.str, values.shape,
                                                      np.ascontiguousarray(values).tobytes()))
    return " ".join(words)

def consistency(grid):
    for association, count in (("points", grid.n_points), ("cells", grid.n_cells)):
        for name, values in grid.fields(association).items():
            if len(values) != count:
                return f"{association} field {name!r} has {len(values)} tuples of {count}"
    return ""

with open(sys.argv[1]) as cases, open(sys.argv[2], "w", buffering=1) as log:
    for path in json.load(cases):
        log.write(json.dumps({"start": path}) + "\n")
        try:
            grid = daxpy.io.read(path)
            problem = consistency(grid)
            outcome = "inconsistent: " + problem if problem else "ok " + digest(grid)
        except DaxpyError as err:
            outcome = f"refused {type(err).__name__}: {err}"
        except BaseException as err:
            outcome = f"RAW {type(err).__name__}: {str(err)[:300]}"
        log.write(json.dumps({"path": path, "outcome": outcome}) + "\n")
"""


def _run_child(paths: list[str], folder: Path, timeout: float) -> dict[str, str]:
    cases, progress = folder / "cases.json", folder / "progress.jsonl"
    cases.write_text(json.dumps(paths))
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(cases), str(progress),
                               str(MEMORY_LIMIT)], capture_output=True, timeout=timeout,
                              env=env)
        failure = None if done.returncode == 0 else \
            f"CRASH (exit status {done.returncode}): {done.stderr.decode()[-300:]}"
    except subprocess.TimeoutExpired:
        failure = "HANG"
    outcomes, started = {}, None
    for line in progress.read_text().splitlines() if progress.exists() else []:
        entry = json.loads(line)
        if "start" in entry:
            started = entry["start"]
        else:
            outcomes[entry["path"]] = entry["outcome"]
    if failure is not None:
        outcomes[started or paths[0]] = failure
    return outcomes


def read_all(paths: list[str], folder: Path, timeout: float = 60) -> dict[str, str]:
    """Outcome of ``daxpy.io.read`` for each of ``paths`` (see the module docstring).

    ``folder`` holds the children's case lists and progress logs.
    """
    outcomes: dict[str, str] = {}
    while len(outcomes) < len(paths):
        left = [path for path in paths if path not in outcomes]
        outcomes.update(_run_child(left, folder, timeout))
    return outcomes


def failures(outcomes: dict[str, str], allowed=("ok", "refused ")) -> dict[str, str]:
    """The outcomes that are neither a dataset nor a daxpy error."""
    return {path: outcome for path, outcome in outcomes.items()
            if not outcome.startswith(allowed)}


def batch_settings(max_examples: int) -> settings:
    """Hypothesis settings for a test whose example is a batch of files read in
    a child: no shrinking (it would rerun the child hundreds of times; the
    files' names already say which case failed) and no deadline."""
    return settings(phases=[Phase.explicit, Phase.reuse, Phase.generate],
                    max_examples=max_examples, deadline=None,
                    suppress_health_check=list(HealthCheck))
