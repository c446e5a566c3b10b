"""tensorlet's CUDA kernels against the device's own copy bandwidth, float32.

The baseline is measured in the same run, on the same device: a device-to-device
copy of the same size (`dst.copy_(src)`, which is `cudaMemcpyAsync` for two
contiguous tensors). Each row counts the bytes its kernel must move and reports
its bandwidth as a fraction of the copy's:

    python benchmarks/cuda_kernels.py                  # 16M, 64M and 256M floats, >= 20 runs per row
    python benchmarks/cuda_kernels.py --smoke          # 1M floats, few runs (no targets)
    python benchmarks/cuda_kernels.py --tensorlet DIR  # DIR holds the `tensorlet` package of a USE_CUDA=ON build

| row | tensorlet | bytes moved | target |
|---|---|---|---|
| copy (baseline) | `dst.copy_(src)` | 2 x 4n | -- |
| add | `tl.add(a, b, out=c)` | 3 x 4n (read plus written) | >= 0.90 of copy's GB/s |
| mul | `tl.mul(a, b, out=c)` | 3 x 4n | >= 0.90 |
| sum | `a.sum()` | 4n (read) | >= 0.90 |
| amax | `a.amax()` | 4n | >= 0.90 (the reductions' loop with another reducer) |
| exp | `tl.exp(a, out=c)` | 2 x 4n | (reported: the unary ops' loop) |

The targets are issue 27's: elementwise add and mul on 16M-256M float32 at 0.9 of the
copy bandwidth or more, reductions likewise; each size gets its own table.

With --mm N[,N...] (default 1024,4096,8192; 512 with --smoke) it also times `tl.mm` on
N x N float32 matrices, checked first against NumPy at 512, and reports TFLOP/s; the
row says whether tensorlet's mm is cuBLAS (a USE_CUBLAS=ON build) or its tiled kernel.
Where a CUDA torch is importable (--no-torch turns it off) the same rows run through
torch too, on the same device but in a child process that never loads tensorlet (two
CUDA libraries and their allocators in one process would measure each other): its
copy/add/sum/mul as a fraction of its own copy, and `torch.mm` (cuBLAS) beside
tensorlet's mm at each N, TF32 off on both sides (tensorlet's cuBLAS handle uses
CUBLAS_DEFAULT_MATH). With cuBLAS the target is tensorlet's time within 1.1x torch's.

Every row's result is checked against NumPy before it is timed. Each run times
`--inner` back-to-back calls between two `tensorlet.cuda.synchronize()` calls;
the rows are interleaved run by run and compared by medians. Without a CUDA
device (or a tensorlet built without CUDA) the script says so and exits 0: there
is nothing to measure. Exit status 1 when a target is missed (not in --smoke).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.90  # fraction of the copy's bandwidth, for the rows in TARGETED
TARGETED = ("add", "mul", "sum", "amax")
ELEMENTS = [16 << 20, 64 << 20, 256 << 20]
MM_TARGET = 1.10  # tensorlet's cuBLAS mm time / torch.mm's, float32, TF32 off on both sides


def load_tensorlet(where: Path):
    sys.path.insert(0, str(where))
    import tensorlet

    return tensorlet


def timed(fn: Callable[[], object], inner: int, synchronize: Callable[[], None]) -> float:
    """Seconds per call over `inner` queued calls, the queue drained before and after."""
    synchronize()
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    synchronize()
    return (time.perf_counter() - start) / inner


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--smoke", action="store_true", help="1M floats and 3 runs: a quick check, no targets")
    p.add_argument("--tensorlet", type=Path, default=REPO / "examples" / "tensorlet",
                   help="folder holding the tensorlet package (default: examples/tensorlet)")
    p.add_argument("--elements", type=int_list, help="N[,N...] floats per tensor, a table each (default: 16M, 64M "
                   "and 256M, or 1M with --smoke)")
    p.add_argument("--runs", type=int, help="runs per row (default: 20, or 3 with --smoke)")
    p.add_argument("--inner", type=int, default=10, help="calls per run (default: 10)")
    p.add_argument("--mm", type=int_list, help="N[,N...] of the N x N matmul rows (default: 1024,4096,8192, "
                   "or 512 with --smoke; 0: none)")
    p.add_argument("--no-torch", action="store_true", help="no torch rows even where torch has CUDA")
    p.add_argument("--torch-only", action="store_true", help=argparse.SUPPRESS)  # the child process
    args = p.parse_args(argv)
    if args.torch_only:
        return torch_child(args)
    sizes = args.elements or ([1 << 20] if args.smoke else ELEMENTS)
    runs = args.runs or (3 if args.smoke else 20)

    tl = load_tensorlet(args.tensorlet)
    if not tl.cuda.is_available():
        reason = tl._libraries.cuda_error or ("no CUDA device" if tl.cuda.is_built() else "tensorlet was built without CUDA")
        print(f"no CUDA device to measure on ({reason}): nothing to do")
        return 0
    sync = tl.cuda.synchronize

    device = tl.cuda.get_device_name()
    missed = []
    for n in sizes:
        missed += bandwidth_table(tl, n, runs, args.inner, sync, f"tensorlet CUDA kernels, {device}", targets=True)
    mm_ns = [m for m in (args.mm if args.mm is not None else ([512] if args.smoke else [1024, 4096, 8192])) if m]
    mm_runs = max(3, runs // 4)
    mm_seconds = {m: mm_row(tl, m, mm_runs) for m in mm_ns}
    torch_mm: dict[int, float] = {}
    if not args.no_torch:
        child = subprocess.run([sys.executable, __file__, "--torch-only", "--elements", ",".join(map(str, sizes)),
                                "--runs", str(runs),
                                "--inner", str(args.inner), "--mm", ",".join(map(str, mm_ns)) or "0"],
                               capture_output=True, text=True)
        lines = child.stdout.splitlines()
        print("\n".join(line for line in lines if not line.startswith("mm-seconds ")))
        if child.returncode != 0:
            print(f"torch rows failed (exit {child.returncode}): {child.stderr.strip()[-2000:]}")
        torch_mm = {int(line.split()[1]): float(line.split()[2]) for line in lines if line.startswith("mm-seconds ")}
    if mm_seconds:
        cublas = importlib.import_module(f"{tl.__name__}.config").build_info().get("cublas", False)
        kernel = "cuBLAS" if cublas else "tiled kernel"
        print(f"\nmm, float32, N x N x N, TF32 off (median of {mm_runs} runs x 3 calls); tensorlet's mm: {kernel}")
        print("| N | tensorlet | TFLOP/s | torch.mm (cuBLAS) | TFLOP/s | time / torch's | target |")
        print("|---|---|---|---|---|---|---|")
        for m, mine in mm_seconds.items():
            flop, theirs = 2 * m**3, torch_mm.get(m)
            ratio = mine / theirs if theirs else None
            target = f"<= {MM_TARGET:.2f}" if cublas and theirs and not args.smoke else ""
            if target and ratio > MM_TARGET:
                missed.append(f"mm {m}: {ratio:.2f}x torch's time")
            print(f"| {m} | {mine * 1e3:.2f} ms | {flop / mine / 1e12:.1f} | "
                  + (f"{theirs * 1e3:.2f} ms | {flop / theirs / 1e12:.1f} | {ratio:.2f}" if theirs else "-- | -- | --")
                  + f" | {target} |")
    if missed and not args.smoke:
        print("missed: " + "; ".join(missed), file=sys.stderr)
        return 1
    return 0


def torch_child(args) -> int:
    """The torch rows, in a process of their own (see the module's docstring)."""
    try:
        import torch
    except ImportError as e:
        print(f"torch rows skipped: {e}")
        return 0
    if not torch.cuda.is_available():
        print(f"torch rows skipped: torch {torch.__version__} sees no CUDA device")
        return 0
    import numpy as np

    torch.backends.cuda.matmul.allow_tf32 = False  # float32 against float32: no TF32 tensor cores
    for n in args.elements:
        bandwidth_table(torch, n, args.runs, args.inner, torch.cuda.synchronize,
                        f"torch {torch.__version__}, the same rows in a child process", targets=False)
    rng = np.random.default_rng(0)
    sync = torch.cuda.synchronize
    runs = args.runs
    for m in (m for m in args.mm or [] if m):
        ma = torch.from_numpy(rng.standard_normal((m, m), dtype=np.float32)).cuda()
        mb = torch.from_numpy(rng.standard_normal((m, m), dtype=np.float32)).cuda()
        print("mm-seconds", m, median_mm_seconds(lambda a=ma, b=mb: torch.mm(a, b), max(3, runs // 4), sync))
    return 0


def bandwidth_table(lib, n: int, runs: int, inner: int, synchronize: Callable[[], None], title: str,
                    targets: bool) -> list[str]:
    """Times the rows on n floats through `lib` (tensorlet or torch: the same calls), each checked
    against NumPy first; prints a table and returns the targets missed (when `targets`)."""
    import numpy as np

    rng = np.random.default_rng(0)
    host_a = rng.standard_normal(n, dtype=np.float32)
    host_b = rng.standard_normal(n, dtype=np.float32)
    a, b = lib.from_numpy(host_a).cuda(), lib.from_numpy(host_b).cuda()
    c, dst = lib.empty(n, device="cuda"), lib.empty(n, device="cuda")

    # Correct first: a fast wrong kernel is no result.
    dst.copy_(a)
    np.testing.assert_array_equal(dst.cpu().numpy(), host_a)
    lib.add(a, b, out=c)
    np.testing.assert_allclose(c.cpu().numpy(), host_a + host_b, rtol=1e-6)
    lib.mul(a, b, out=c)
    np.testing.assert_allclose(c.cpu().numpy(), host_a * host_b, rtol=1e-6)
    expected, got = float(host_a.astype(np.float64).sum()), a.sum().cpu().item()
    # float32 partial sums: the error grows with the sum of magnitudes, not with the sum.
    assert abs(got - expected) <= 1e-5 * float(np.abs(host_a).sum()), (got, expected)
    lib.exp(a, out=c)
    np.testing.assert_allclose(c.cpu().numpy(), np.exp(host_a), rtol=1e-6)
    assert a.amax().cpu().item() == host_a.max()
    del host_a, host_b

    rows: dict[str, tuple[Callable[[], object], int]] = {
        "copy (baseline)": (lambda: dst.copy_(a), 2 * 4 * n),
        "add": (lambda: lib.add(a, b, out=c), 3 * 4 * n),
        "mul": (lambda: lib.mul(a, b, out=c), 3 * 4 * n),
        "sum": (lambda: a.sum(), 4 * n),
        "amax": (lambda: a.amax(), 4 * n),
        "exp": (lambda: lib.exp(a, out=c), 2 * 4 * n),
    }
    for fn, _ in rows.values():  # warm up: module loading, allocator, clocks
        timed(fn, inner, synchronize)
    seconds: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(runs):
        for name, (fn, _) in rows.items():
            seconds[name].append(timed(fn, inner, synchronize))

    print(f"\n{title}, float32, {n:,} elements ({n * 4 / 2**20:.0f} MiB per tensor), median of {runs} runs x "
          f"{inner} calls")
    print("| row | median | GB/s | fraction of copy | target |")
    print("|---|---|---|---|---|")
    copy_rate = rows["copy (baseline)"][1] / statistics.median(seconds["copy (baseline)"])
    missed = []
    for name, (_, moved) in rows.items():
        median = statistics.median(seconds[name])
        rate = moved / median
        fraction = rate / copy_rate
        target = f">= {TARGET:.2f}" if targets and name in TARGETED else ""
        if target and fraction < TARGET:
            missed.append(f"{name} at {n:,}: {fraction:.2f} of the copy bandwidth")
        print(f"| {name} | {median * 1e6:.1f} us | {rate / 1e9:.0f} | {fraction:.2f} | {target} |")
    return missed


def median_mm_seconds(mm: Callable[[], object], runs: int, synchronize: Callable[[], None]) -> float:
    """Seconds per call of `mm`, after two warm-up calls: the median of `runs` runs of 3 calls."""
    timed(mm, 2, synchronize)
    return statistics.median(timed(mm, 3, synchronize) for _ in range(runs))


def int_list(text: str) -> list[int]:
    """--elements' and --mm's value: N or N,N,... (--mm 0: no mm rows)."""
    return [int(part) for part in text.split(",") if part.strip()]


def mm_row(tl, n: int, runs: int) -> float:
    """Seconds per tl.mm on n x n float32, checked against NumPy at 512 first."""
    import numpy as np

    rng = np.random.default_rng(1)
    small_a, small_b = rng.standard_normal((512, 512), dtype=np.float32), rng.standard_normal((512, 512), dtype=np.float32)
    got = tl.mm(tl.from_numpy(small_a).cuda(), tl.from_numpy(small_b).cuda()).cpu().numpy()
    np.testing.assert_allclose(got, small_a.astype(np.float64) @ small_b, rtol=1e-3, atol=1e-3)
    a = tl.from_numpy(rng.standard_normal((n, n), dtype=np.float32)).cuda()
    b = tl.from_numpy(rng.standard_normal((n, n), dtype=np.float32)).cuda()
    return median_mm_seconds(lambda: tl.mm(a, b), runs, tl.cuda.synchronize)


if __name__ == "__main__":
    sys.exit(main())
