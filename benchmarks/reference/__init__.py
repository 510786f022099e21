"""Reference CUDA kernels for the kernel benchmark: hand-tuned and generic.

``hand_tuned.cu`` holds one kernel per case, written for that case alone;
``generic.cu`` holds one switch-based kernel per worklet for every grid type
(the "unmodified Dax" analog of seed 004). Both load through ``cupy.RawModule``.
Every builder here returns ``(launch, out)``: ``launch()`` only enqueues the
kernel (so CUDA events time the kernel and nothing else) and ``out`` is the
preallocated output, poisoned with NaN so that an unwritten element shows.

Examples
--------
>>> HAND_TUNED_BEST["point_to_cell_hex"]
'vec_conn'
"""

from __future__ import annotations

from ._launch import Launch
from .generic import Generic
from .hand_tuned import HAND_TUNED_BEST, HAND_TUNED_VARIANTS, HandTuned

__all__ = ["Generic", "HandTuned", "HAND_TUNED_BEST", "HAND_TUNED_VARIANTS", "Launch"]
