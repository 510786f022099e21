#!/bin/bash
# GPU check of the CUDA backend (run on the device machine from the repo root):
# offline install, a quick bandwidth table (each kernel checked against the
# NumPy backend before it is timed), then the GPU tests.
#   PYTEST_K: pytest -k expression; PYTEST_TIMEOUT: seconds.
#   TESTS: test files (default test_cuda_backend.py).
set -o pipefail
rm -rf /tmp/site; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site . || exit 1
# Test-only wheels (hypothesis) carried in .whl-cuda where the image lacks them.
if [ -d .whl-cuda ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/whl .whl-cuda/*.whl || exit 1
fi
export PYTHONPATH=/tmp/site:/tmp/whl PYTHONUNBUFFERED=1 DAXPY_CACHE_DIR=/tmp/daxpy-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd benchmarks && python3 cuda_quick.py ${QUICK_ARGS} 2>&1 | tee "$OUT/quick.log")
(cd tests && timeout ${PYTEST_TIMEOUT:-150} python3 -m pytest -x -q -m gpu -p no:cacheprovider \
    ${TESTS:-test_cuda_backend.py} ${PYTEST_K:+-k "$PYTEST_K"} 2>&1 | tee "$OUT/pytest.log" | tail -40)
