#!/bin/bash
# One device call for issues 5 and 6, from the repository root, VTK already in
# /tmp/site: the GPU tests of streaming and transfers, then the Dax study with
# issue 5's end-to-end rows (one measuring pass), then the BiasAdd study.
# Results (benchmarks/results) come back as $OUT/results.tgz, logs beside it.
set -o pipefail
python3 -m pip install -q --no-deps --no-build-isolation --no-index --target /tmp/site . || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 DAXPY_CACHE_DIR=/tmp/daxpy-cache
OUTDIR=${OUT:-/tmp/out}; mkdir -p "$OUTDIR"; unset OUT
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader
python3 -c "import vtk, cupy, ml_dtypes, matplotlib; print('vtk', vtk.vtkVersion.GetVTKVersion(), 'cupy', cupy.__version__)"
(cd tests && timeout ${PYTEST_TIMEOUT:-150} python3 -m pytest -q -m gpu -p no:cacheprovider \
    test_transfer.py test_streaming.py 2>&1 | tee "$OUTDIR/pytest.log" | tail -15)
timeout ${STUDY_TIMEOUT:-280} python3 benchmarks/dax_study.py --end-to-end \
    --time-budget ${STUDY_BUDGET:-200} > "$OUTDIR/study.log" 2>&1
echo "study exit $?"; grep -E "^\| (goal|gradient|pass-through)|MISMATCH|Error|error:" "$OUTDIR/study.log" | head -30
timeout ${BIAS_TIMEOUT:-45} python3 benchmarks/bias_study.py > "$OUTDIR/bias.log" 2>&1
echo "bias exit $?"; grep -E "^\| [A-Z].*\| (hand-tuned|daxpy|numpy) \|" "$OUTDIR/bias.log"
tar czf "$OUTDIR/results.tgz" benchmarks/results
