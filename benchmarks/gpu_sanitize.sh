#!/bin/bash
# Sanitized GPU runs (issue 7), on the device machine from the repository root:
#   1. plain: element counts above 2**31 and GPU out-of-memory (test_gpu_reliability.py);
#   2. compute-sanitizer memcheck over every stencil and unstructured worklet
#      (the sweep of test_gpu_reliability.py: each topological worklet on
#      1-/2-/3-D uniform, rectilinear, curvilinear and unstructured edge-case
#      grids, float32/float64, 1/3/9 components, aligned and misaligned input),
#      the deterministic unstructured tests of test_cuda_backend.py, and the
#      device-resident connectivity checks;
#   3. compute-sanitizer racecheck over the 3-D structured sweep (the marching
#      kernels stage outputs in shared memory);
#   4. plain: the GPU fuzz tests (test_fuzz_gpu.py).
# Under the sanitizers CuPy's memory pool is off (plain cudaMalloc per array),
# so an access past any array is outside an allocation and memcheck sees it.
# Writes $OUT/sanitizer-summary.txt and one log per step.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
START=$(date +%s)
rm -rf /tmp/site; python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site . || exit 1
if [ -d .whl-cuda ]; then   # test-only wheels (hypothesis) the image lacks
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/whl .whl-cuda/*.whl || exit 1
fi
mkdir -p /tmp/plugins
cat > /tmp/plugins/daxpy_nopool.py <<'PY'
"""pytest plugin: every CuPy array is its own cudaMalloc (no pool), for memcheck."""
import cupy

cupy.cuda.set_allocator(None)
PY
export PYTHONPATH=/tmp/site:/tmp/whl:/tmp/plugins PYTHONUNBUFFERED=1 DAXPY_CACHE_DIR=/tmp/daxpy-cache
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1)
SUMMARY="$OUT/sanitizer-summary.txt"
PYTEST="python3 -m pytest -q -m gpu -p no:cacheprovider -W ignore::RuntimeWarning"
SWEEP_3D="sanitizer_sweep and (uniform3d or rectilinear3d or curvilinear3d)"

step() {  # step NAME TIMEOUT COMMAND...: run in tests/, log to $OUT/NAME.log, time it
    local name=$1 limit=$2; shift 2
    local t0=$(date +%s)
    (cd tests && timeout "$limit" "$@") > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc after $(( $(date +%s) - t0 )) s (limit $limit s)" >> "$OUT/steps.txt"
    tail -3 "$OUT/$name.log"
}

: > "$OUT/steps.txt"
summarize() {  # rewritten after every step, so a run cut short still reports
    {
        echo "daxpy compute-sanitizer summary ($(date -u +%Y-%m-%d))"
        nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
        "$SAN" --version 2>&1 | grep -i version | head -1
        python3 -c "import cupy, numpy; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'nvrtc', cupy.cuda.nvrtc.getVersion())" 2>&1
        echo
        echo "== steps (exit 99: the sanitizer found errors; 124: time limit) =="
        cat "$OUT/steps.txt"
        for name in plain memcheck racecheck fuzz; do
            [ -f "$OUT/$name.log" ] || continue
            echo
            echo "== $name =="
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Invalid|Race reported|hazard" \
                "$OUT/$name.log" | sort | uniq -c | head -20
            grep -E "^(FAILED|ERROR) |^[0-9]+ (passed|failed|skipped|deselected)" "$OUT/$name.log" \
                | tail -12
        done
        echo
        echo "total: $(( $(date +%s) - START )) s"
    } > "$SUMMARY"
}

if [ -z "$SAN" ]; then echo "compute-sanitizer not found" >> "$OUT/steps.txt"; fi
step plain 70 $PYTEST test_gpu_reliability.py -k "2_31 or memory"; summarize
step memcheck 115 "$SAN" --tool memcheck --error-exitcode 99 --print-limit 20 \
    $PYTEST -p daxpy_nopool test_gpu_reliability.py test_cuda_backend.py test_fuzz_gpu.py \
    -k "sanitizer_sweep or mixed_grid_all_shapes or reproducible or connectivity or big_endian"
summarize
step racecheck 45 "$SAN" --tool racecheck --error-exitcode 99 --print-limit 20 \
    $PYTEST -p daxpy_nopool test_gpu_reliability.py \
    -k "$SWEEP_3D and (point_to_cell or cell_to_point or point_gradient)"
summarize
step fuzz 40 $PYTEST test_fuzz_gpu.py; summarize
cat "$SUMMARY"
