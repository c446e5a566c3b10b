#!/usr/bin/env bash
# tensorlet on a GPU machine, in one bounded run (from the repository root):
#   bash examples/tensorlet/ci/gpu_check.sh
# 1. the in-place build with CUDA for the card's architecture (TENSORLET_CUDA_ARCH_LIST,
#    default 9.0: H100/H200) and cuBLAS for float mm/bmm (USE_CUBLAS, default ON here: see
#    "cuBLAS" below), 2. the op-info rows of every backend (softmax and log_softmax among
#    them) and test_cuda.py's GPU tests (arange, rand/randn against Philox's stream, the
#    softmax kernels), 3. benchmarks/cuda_kernels.py (add, mul, sum and amax against the
#    copy bandwidth at 16M, 64M and 256M floats; its mm rows at 1024, 4096 and 8192
#    against torch.mm, TF32 off on both sides), 4. the cuda rows again under compute-sanitizer,
#    5. buildkit's own CUDA tests (tests/test_cuda_minimal.py, tests/test_cuda_arch.py: a CUDA
#    build, its saxpy on the device), 6. test_cuda.py's full-build tests (SKIP_FULL_BUILD=1:
#    not). Each step has its own time limit, so a hang costs that step only; logs go to $OUT
#    (default ./gpu-logs), one file per step.
set -u
OUT=${OUT:-$PWD/gpu-logs}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
ARCH=${TENSORLET_CUDA_ARCH_LIST:-9.0}
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
T=examples/tensorlet/test
USE_CUBLAS=${USE_CUBLAS:-ON}

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

step env 30 bash -c "nvidia-smi; $PY -V; $NVCC --version | tail -2; cmake --version | head -1; \
  $PY -c 'import numpy, pytest; print(numpy.__version__, pytest.__version__)'; env | grep -E '^(CUDA|TORCH|NVIDIA|LD_LIBRARY)' | sort"
# cuBLAS: from NVIDIA's nvidia-cublas wheel where this Python has it (a CUDA 13 torch brings
# it; pyproject.toml's library dependency with `when = "USE_CUDA and USE_CUBLAS and not
# USE_SYSTEM_CUBLAS"`); without the wheel, the toolkit's own cuBLAS (USE_SYSTEM_CUBLAS=ON:
# this machine reaches no package index). The build log's "cuBLAS:" line says which.
SYSTEM_CUBLAS=OFF
if [ "$USE_CUBLAS" = ON ] && ! $PY -c "import importlib.metadata as m; m.version('nvidia-cublas')" 2>/dev/null; then
  SYSTEM_CUBLAS=ON
  echo "=== no nvidia-cublas wheel here: the CUDA toolkit's cuBLAS (USE_SYSTEM_CUBLAS=ON)"
fi
step build 240 env USE_CUDA=ON USE_CUBLAS="$USE_CUBLAS" USE_SYSTEM_CUBLAS="$SYSTEM_CUBLAS" TENSORLET_CUDA_ARCH_LIST="$ARCH" CUDACXX="$NVCC" \
  $PY -m buildkit develop examples/tensorlet
# What was built (CUDA archs, cuBLAS on or off), as tensorlet-config prints it.
(cd examples/tensorlet && $PY -c "import tensorlet.config as c; c.main()") || true
# torch's own checks (test_semantics.py's torch rows) stay out of this process: importing
# torch after tensorlet crashed there (see torch_after_tensorlet below); they run on their own.
TAIL=45 step tests 200 $PY -m pytest -p no:cacheprovider -q -rfs $T/test_opinfo.py $T/test_op_table.py $T/test_cuda.py $T/test_semantics.py \
  -k "not torch and not full_build and not build_compiles and not build_imports and not runtime_comes and not cuda_column"
step bench 240 $PY benchmarks/cuda_kernels.py
# On the H200 image, `import tensorlet` then `import torch` inside pytest segfaulted in
# torch's import (torch alone under pytest, and `python -c` in either order, did not):
# torch's checks of the semantics table run last, on their own, and this step shows
# that a plain process can import torch after tensorlet ran CUDA kernels.
TAIL=20 step torch_after_tensorlet 60 $PY -X faulthandler -c "import tensorlet as tl
x = tl.ones(4, device='cuda'); assert (x + x).cpu().tolist() == [2.0] * 4
import torch; print('torch', torch.__version__, 'imported after tensorlet ran CUDA kernels'); print(torch.ones(2).cuda() + 1)"
# -m: test_op_table_matches_torch is torch-marked; here it runs the op table's cuda column.
step torch_semantics 90 $PY -m pytest -p no:cacheprovider -q -rfs -m "torch or not torch" $T/test_semantics.py -k torch
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
step sanitizer 150 "$SANITIZER" --tool memcheck --error-exitcode 99 $PY -m pytest -p no:cacheprovider -q \
  $T/test_opinfo.py $T/test_cuda.py -k "cuda and not full_build and not build_ and not runtime_comes and not cuda_column"
# buildkit's own CUDA tests and the full build run buildkit in a venv over this Python's:
# buildkit must be installed there.
step install_buildkit 40 bash -c "$PY -m pip install -q --no-deps --no-build-isolation --no-index . && \
  $PY -m pip install -q --no-deps --no-build-isolation --no-index -e tests/utils"  # the tests' helpers
# tests/packages/cuda_minimal built for 8.0 (a wheel, byte-identical in two folders, then
# develop), its saxpy run on the device (the `gpu` test) and the arch-list rows.
TAIL=30 step buildkit_cuda 240 $PY -m pytest -p no:cacheprovider -q -rfs tests/test_cuda_minimal.py tests/test_cuda_arch.py
[ -n "${SKIP_FULL_BUILD:-}" ] && exit 0
step full_build 150 $PY -m pytest -p no:cacheprovider -q -rfs $T/test_cuda.py -k "build_compiles or build_imports or cuda_column"
