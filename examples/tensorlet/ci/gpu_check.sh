#!/usr/bin/env bash
# tensorlet on a GPU machine, in one bounded run (from the repository root):
#   bash examples/tensorlet/ci/gpu_check.sh
# 1. the in-place build with CUDA for the card's architecture (TENSORLET_CUDA_ARCH_LIST,
#    default 9.0: H100/H200), 2. the op-info rows of every backend and test_cuda.py's GPU
#    tests, 3. benchmarks/cuda_kernels.py, 4. the cuda rows again under compute-sanitizer,
#    5. test_cuda.py's full-build tests. Each step has its own time limit, so a hang
#    costs that step only; logs go to $OUT (default ./gpu-logs), one file per step.
set -u
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
ARCH=${TENSORLET_CUDA_ARCH_LIST:-9.0}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
T=examples/tensorlet/test

step() {  # name, seconds, command...
  local name=$1 limit=$2
  shift 2
  echo "=== $name (limit ${limit}s, $(date -u +%T))"
  local start=$SECONDS
  timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  echo "=== $name: rc=$rc after $((SECONDS - start))s"
  tail -n "${TAIL:-25}" "$OUT/$name.log"
}

step env 60 bash -c "nvidia-smi; $PY -V; $NVCC --version | tail -2; cmake --version | head -1; \
  $PY -c 'import numpy, pytest; print(numpy.__version__, pytest.__version__)'"
step build 240 env USE_CUDA=ON TENSORLET_CUDA_ARCH_LIST="$ARCH" CUDACXX="$NVCC" $PY -m buildkit develop examples/tensorlet
TAIL=45 step tests 180 $PY -m pytest -p no:cacheprovider -q -rfs $T/test_opinfo.py $T/test_cuda.py $T/test_semantics.py \
  -k "not full_build and not build_compiles and not build_imports and not runtime_comes"
step bench 150 $PY benchmarks/cuda_kernels.py
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step sanitizer 120 "$SANITIZER" --tool memcheck --error-exitcode 99 $PY -m pytest -p no:cacheprovider -q -x \
  $T/test_opinfo.py $T/test_cuda.py -k "cuda and not full_build and not build_ and not runtime_comes"
# The full build runs buildkit in a venv over this Python's: buildkit must be installed there.
step install_buildkit 60 $PY -m pip install -q --no-deps --no-build-isolation --no-index .
step full_build 240 $PY -m pytest -p no:cacheprovider -q -rfs $T/test_cuda.py -k "build_compiles or build_imports"
