"""What the reference-kernel launchers share: a bound launch and small checks.

Examples
--------
>>> _blocks(513, 256)
3
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
INT32_LIMIT = 2**31 - 1


@dataclass
class Launch:
    """One kernel launch with everything bound; calling it only enqueues it."""

    kernel: Any
    grid: tuple
    block: tuple
    args: tuple
    shared_mem: int = 0
    keep: list = field(default_factory=list)   # device buffers the args point into

    def __call__(self) -> None:
        self.kernel(self.grid, self.block, self.args, shared_mem=self.shared_mem)


def _cupy():
    import cupy

    return cupy


def _blocks(n: int, per_block: int) -> int:
    return max(1, -(-n // per_block))


def _check_32bit(what: str, count: int) -> None:
    if count > INT32_LIMIT:
        raise ValueError(f"{what}: {count} elements need 64-bit indices; the "
                         "hand-tuned kernels are written for 32-bit ones")


def _poisoned(shape, dtype):
    cp = _cupy()
    return cp.full(shape, cp.nan, dtype=dtype)
