#!/bin/bash
# The one device script: run from the repository root on the GPU machine.
#
#   bash benchmarks/device.sh [--no-tests] [--sanitize] [--old] [SUITE...]
#
# 1. installs daxpy (pip --target /tmp/site; test-only wheels from .whl-cuda when there,
#    VTK from /tmp/vtksite when staged there);
# 2. runs every GPU-marked test and the thread tests (unless --no-tests);
# 3. --sanitize: compute-sanitizer memcheck and racecheck over the sweep of
#    test_gpu_reliability.py (see sanitize() below), summary in $OUT/sanitizer-summary.txt;
# 4. runs each SUITE (daxpy bench --list) with --save, so that its JSON lands in
#    benchmarks/results/ and in $OUT. A suite's own options come from the variable
#    <SUITE>_ARGS, upper case with '-' as '_' (KERNELS_ARGS="--impls daxpy",
#    END_TO_END_ARGS="--time-budget 200");
# 5. --old: before/after in one session: the same suites for the commit archived in
#    .devcarry/old.tar (git archive REV -o .devcarry/old.tar), first, into $OUT/old/.
#
# Logs go to $OUT (default /tmp/out): install.log, gpu-tests.log, thread-tests.log,
# <suite>.log, and results.tgz (benchmarks/results/ after the suites, tables and plots too). Timeouts: TEST_TIMEOUT (480 s), SUITE_TIMEOUT (280 s per suite).
set -o pipefail
REPO=$(pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; export OUT
tests=1; sanitize=0; old=0; suites=()
for arg in "$@"; do
    case "$arg" in
        --no-tests) tests=0;; --sanitize) sanitize=1;; --old) old=1;;
        -*) echo "usage: device.sh [--no-tests] [--sanitize] [--old] [SUITE...]" >&2; exit 2;;
        *) suites+=("$arg");;
    esac
done
export PYTHONUNBUFFERED=1 DAXPY_CACHE_DIR=/tmp/daxpy-cache
# Seed 000's graph runs 30 branches at once: give each its own hardware queue.
export CUDA_DEVICE_MAX_CONNECTIONS=32

install() {  # install SOURCE TARGET
    (cd "$1" && python3 -m pip install -q --upgrade --no-deps --no-build-isolation --no-index \
        --target "$2" .) >> "$OUT/install.log" 2>&1
}
install "$REPO" /tmp/site || { tail -5 "$OUT/install.log"; exit 1; }
if [ -d .whl-cuda ]; then   # test-only wheels (hypothesis) the image lacks
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/whl \
        .whl-cuda/*.whl >> "$OUT/install.log" 2>&1 || exit 1
fi
export PYTHONPATH=/tmp/site:/tmp/whl:/tmp/vtksite
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

# Tests run from tests/ and suites from /tmp, so that the installed daxpy (with
# worklets/ and filters/ mapped into it) is imported, not the checkout's daxpy/.
if [ "$tests" = 1 ]; then
    # On a fresh machine every kernel is compiled once (NVRTC, a core each): one process
    # had not finished the GPU tests in 500 s; twelve xdist workers, with about half
    # of the kernels already in the disk cache, took 71 s.
    workers=()
    python3 -c "import xdist" 2>/dev/null && workers=(-n "${TEST_WORKERS:-12}")
    (cd tests && timeout "${TEST_TIMEOUT:-480}" python3 -m pytest -q -m gpu -p no:cacheprovider \
        "${workers[@]}" . 2>&1 | tee "$OUT/gpu-tests.log" | tail -30)
    (cd tests && timeout 300 python3 -m pytest -q -p no:cacheprovider \
        test_no_crash_threads.py 2>&1 | tee "$OUT/thread-tests.log" | tail -5)
fi

sanitize() {
    # Under the sanitizers CuPy's memory pool is off (plain cudaMalloc per array),
    # so an access past any array is outside an allocation and memcheck sees it.
    mkdir -p /tmp/plugins
    printf '"""pytest plugin: every CuPy array is its own cudaMalloc (no pool)."""\nimport cupy\n\ncupy.cuda.set_allocator(None)\n' \
        > /tmp/plugins/daxpy_nopool.py
    local san pytest summary="$OUT/sanitizer-summary.txt" step name limit
    san=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer \
        /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -1)
    pytest="python3 -m pytest -q -m gpu -p no:cacheprovider -W ignore::RuntimeWarning"
    [ -n "$san" ] || { echo "compute-sanitizer not found" > "$summary"; return; }
    : > "$OUT/steps.txt"
    for step in \
        "plain|70|$pytest test_gpu_reliability.py -k '2_31 or memory'" \
        "memcheck|115|$san --tool memcheck --error-exitcode 99 --print-limit 20 $pytest -p daxpy_nopool test_gpu_reliability.py test_cuda_backend.py test_fuzz_gpu.py -k 'sanitizer_sweep or mixed_grid_all_shapes or reproducible or connectivity or big_endian'" \
        "racecheck|45|$san --tool racecheck --error-exitcode 99 --print-limit 20 $pytest -p daxpy_nopool test_gpu_reliability.py -k 'sanitizer_sweep and (uniform3d or rectilinear3d or curvilinear3d) and (point_to_cell or cell_to_point or point_gradient)'" \
        "fuzz|40|$pytest test_fuzz_gpu.py"; do
        IFS='|' read -r name limit command <<< "$step"
        (cd tests && PYTHONPATH=$PYTHONPATH:/tmp/plugins timeout "$limit" bash -c "$command") \
            > "$OUT/$name.log" 2>&1
        echo "$name: exit $? (limit $limit s; 99: the sanitizer found errors)" >> "$OUT/steps.txt"
    done
    {
        cat "$OUT/steps.txt"
        for name in plain memcheck racecheck fuzz; do
            echo "== $name =="
            grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Invalid|Race reported|hazard" \
                "$OUT/$name.log" | sort | uniq -c | head -20
            grep -E "^(FAILED|ERROR) |^[0-9]+ (passed|failed|skipped|deselected)" "$OUT/$name.log" | tail -12
        done
    } > "$summary"
    cat "$summary"
}
[ "$sanitize" = 1 ] && sanitize

run_suites() {  # run_suites TREE SITE LOGDIR [daxpy bench options]: every chosen suite
    local tree=$1 site=$2 logs=$3 suite var module; shift 3
    mkdir -p "$logs"
    for suite in "${suites[@]}"; do
        var=$(echo "${suite}_ARGS" | tr 'a-z-' 'A-Z_')
        if [ -f "$tree/benchmarks/__init__.py" ]; then
            (cd /tmp && OUT=$logs DAXPY_CHECKOUT=$tree PYTHONPATH=$site:/tmp/whl:/tmp/vtksite \
                timeout "${SUITE_TIMEOUT:-280}" python3 -m daxpy.cli bench "$suite" "$@" ${!var})
        else  # an archived tree from before 'daxpy bench SUITE': its script
            module=$(cd /tmp && python3 -c "from daxpy.cli.bench import SUITES; print(SUITES['$suite'][0])")
            (cd "$tree/benchmarks" && OUT=$logs PYTHONPATH=$site:/tmp/whl:/tmp/vtksite \
                timeout "${SUITE_TIMEOUT:-280}" python3 "$module.py" ${!var})
        fi 2>&1 | tee "$logs/$suite.log" | tail -30
    done
}
if [ "$old" = 1 ] && [ "${#suites[@]}" -gt 0 ]; then
    rm -rf /tmp/old /tmp/oldsite; mkdir -p /tmp/old
    tar -xf .devcarry/old.tar -C /tmp/old || exit 1
    install /tmp/old /tmp/oldsite || exit 1
    DAXPY_CACHE_DIR=/tmp/old-cache run_suites /tmp/old /tmp/oldsite "$OUT/old" --out /tmp/old-results
fi
if [ "${#suites[@]}" -gt 0 ]; then
    run_suites "$REPO" /tmp/site "$OUT" --save
    # The studies' tables and plots (results/<device>/) come back with the JSON.
    tar czf "$OUT/results.tgz" benchmarks/results
fi
exit 0
