#!/bin/bash
# Reliability round 2 on the GPU machine, from the repository root.
#   bash benchmarks/gpu_reliability.sh tests    every GPU-marked test, and the thread tests
#   bash benchmarks/gpu_reliability.sh kernels  the kernel suite (daxpy rows) of the commit
#       archived in .devcarry/old.tar (git archive REV -o .devcarry/old.tar), then of this
#       tree, in one session: before/after on the same GPU. Logs and JSON go to $OUT
#       ($OUT/old/ for the earlier commit).
#   bash benchmarks/gpu_reliability.sh all      both, tests first
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 DAXPY_CACHE_DIR=/tmp/daxpy-cache
python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index --target /tmp/site . || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mode=${1:-tests}
case "$mode" in tests|kernels|all) ;; *) echo "usage: gpu_reliability.sh tests|kernels|all" >&2; exit 2;; esac
if [ "$mode" != kernels ]; then
    # From tests/, so that the installed daxpy (with worklets/ and filters/) is imported.
    (cd tests && PYTHONPATH=/tmp/site timeout ${TEST_TIMEOUT:-480} python3 -m pytest -q -m gpu \
        -p no:cacheprovider . 2>&1 | tee "$OUT/gpu-tests.log" | tail -30)
    (cd tests && PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q -p no:cacheprovider \
        test_no_crash_threads.py 2>&1 | tee "$OUT/thread-tests.log" | tail -5)
fi
if [ "$mode" != tests ]; then
    rm -rf /tmp/old /tmp/oldsite; mkdir -p /tmp/old "$OUT/old"
    tar -xf .devcarry/old.tar -C /tmp/old || exit 1
    (cd /tmp/old && python3 -m pip install -q --no-deps --no-build-isolation --no-index \
        --target /tmp/oldsite .) || exit 1
    (cd /tmp/old/benchmarks && OUT="$OUT/old" PYTHONPATH=/tmp/oldsite DAXPY_CACHE_DIR=/tmp/old-cache \
        timeout 280 python3 kernels.py --impls daxpy ${KERNEL_ARGS} 2>&1 | tee "$OUT/old/kernels.log" | tail -25)
    (cd benchmarks && PYTHONPATH=/tmp/site timeout 280 python3 kernels.py --impls daxpy \
        ${KERNEL_ARGS} 2>&1 | tee "$OUT/kernels.log" | tail -25)
fi
