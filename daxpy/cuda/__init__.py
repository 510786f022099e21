"""CUDA backend: generated, specialized kernels compiled with NVRTC via CuPy.

Every (worklet, topology, dtypes, components, static parameters) gets its own
kernel, named after that specialization (``point_to_cell__uniform3d__f32__c1``)
and cached in memory and on disk (:mod:`daxpy.cuda.compile`). No kernel
switches on grid type, cell shape or dtype at run time.

Public entry points (importing them needs no GPU; running them needs CuPy):

- :func:`daxpy.cuda.dispatch.run` ``(name, dataset, values, association="points", **params)``
  runs one worklet's generated kernel(s) on device (or host) arrays and returns
  a CuPy array. :func:`daxpy.cuda.dispatch.execute_cuda` is the same for a
  :class:`~daxpy.data.worklet.Worklet` (``daxpy.engine.dispatch.execute`` calls it).
- :func:`kernel_source` ``(name, dataset, field_dtype="float32", components=1, **params)``
  returns the generated source of every kernel that call would launch
  (also ``daxpy source NAME --grid uniform3d --dtype float32``).
- :func:`daxpy.cuda.plan.make_plan` gives the kernels and launch sizes without
  running them; :func:`daxpy.cuda.dispatch.launch` runs a plan into a
  preallocated output (for timing kernels alone, outside allocation).
- :func:`daxpy.cuda.compile.get_kernel` ``(name, source)`` compiles or loads
  one kernel; ``daxpy.cuda.compile.STATS`` counts compiles and cache hits.
- :func:`daxpy.cuda.fusion.run_chain` ``(dataset, values, association, steps)``
  runs a chain of :class:`~daxpy.cuda.fusion.Step` (maps around at most one
  topological worklet) as one fused kernel; :func:`daxpy.cuda.fusion.make_fused_plan`
  plans it, :func:`daxpy.cuda.fusion.chain_source` prints it (also
  ``daxpy source "map>point_to_cell>magnitude"``).
  :func:`daxpy.cuda.pipeline_fusion.plan_units` groups pipeline stages into
  fused units (``Pipeline.run(fuse=False)`` turns it off).
- :func:`daxpy.cuda.device.to_device` makes a zero-copy CuPy view of CuPy,
  PyTorch, JAX or Numba arrays (``__cuda_array_interface__`` / DLPack), or a
  cached device copy of a host array.

Environment: ``DAXPY_CACHE_DIR`` moves the kernel cache; ``DAXPY_BACKEND``
chooses the backend of ``backend="auto"``.

Examples
--------
>>> import daxpy
>>> from daxpy.cuda import kernel_source
>>> "point_to_cell__uniform3d__f32__c1" in kernel_source(
...     "point_to_cell", daxpy.UniformGrid(dims=(4, 4, 4)))
True
"""

from .dispatch import kernel_source

__all__ = ["kernel_source"]
