#!/bin/bash
# One device call that checks the whole GPU side: every GPU-marked test, then
# the pipeline benchmark (with VTK's FY11 rows when VTK sits in /tmp/vtksite,
# staged beforehand from .devcarry, or in /tmp/site from an earlier call).
# Run from the repository root on the GPU machine; logs and JSON go to $OUT.
set -o pipefail
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site . || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/whl .whl-cuda/*.whl || exit 1
export PYTHONPATH=/tmp/site:/tmp/whl PYTHONUNBUFFERED=1 DAXPY_CACHE_DIR=/tmp/daxpy-cache
# Seed 000's graph runs 30 branches at once: give each its own hardware queue.
export CUDA_DEVICE_MAX_CONNECTIONS=32
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd tests && timeout ${TEST_TIMEOUT:-240} python3 -m pytest -q -m gpu -p no:cacheprovider \
    test_cuda_backend.py test_fusion.py test_fuzz_gpu.py test_gpu_reliability.py \
    test_pipeline.py test_streaming.py test_transfer.py 2>&1 | tee "$OUT/gpu-tests.log" | tail -25)
(cd benchmarks && PYTHONPATH=$PYTHONPATH:/tmp/vtksite timeout ${BENCH_TIMEOUT:-300} \
    python3 pipelines.py ${PIPELINE_ARGS} 2>&1 | tee "$OUT/pipelines.log" | tail -45)
