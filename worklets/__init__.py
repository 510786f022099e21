"""Execution layer: one module per worklet family.

Each public module declares its worklet (:class:`daxpy.data.worklet.Worklet`), holds
its NumPy implementation per grid family, and has its CUDA template in a
``.cuh`` file beside it. Importing this package imports every module, which
registers the worklets; modules whose names start with ``_`` are helpers, and
``<family>_cpu`` modules hold a family's compiled CPU kernels, imported (with
Numba) at their first call, never here.
"""

import importlib
import pkgutil

for _info in pkgutil.iter_modules(__path__):
    if not _info.name.startswith("_") and not _info.name.endswith("_cpu"):
        importlib.import_module(f"{__name__}.{_info.name}")
