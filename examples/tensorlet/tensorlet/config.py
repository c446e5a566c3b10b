"""`tensorlet-config`: how this tensorlet was built."""

from __future__ import annotations

import sys


def _git_version() -> str | None:
    # buildkit rewrites version.py on every build (CMake would know only the commit of
    # the last configure).
    try:
        from tensorlet.version import git_version  # type: ignore[import-not-found]
    except ImportError:
        return None
    return git_version


def build_info() -> dict:
    import tensorlet
    from tensorlet import _libraries

    try:
        from tensorlet import _build_config as bc
    except ImportError:  # pragma: no cover - only in a broken install
        bc = None
    get = (lambda k, d=None: getattr(bc, k, d)) if bc else (lambda k, d=None: d)
    return {
        "version": tensorlet.__version__,
        "git_sha": _git_version() or "unknown",
        "build_type": get("build_type", "unknown"),
        "cuda": bool(get("cuda", False)),
        "cuda_archs": get("cuda_archs", ""),
        "cublas": bool(get("cublas", False)),
        "cuda_available": tensorlet.cuda.is_available(),
        "blas": bool(get("blas", False)),
        "openmp": bool(get("openmp", False)),
        "cpu_variants": get("cpu_variants", ""),
        "profiler": bool(get("profiler", False)),
        "functional": bool(get("functional", False)),
        "libraries": str(_libraries.lib_dir),
    }


def main(argv: "list[str] | None" = None) -> int:
    info = build_info()
    onoff = lambda b: "ON" if b else "OFF"  # noqa: E731
    lines = [
        f"tensorlet {info['version']}",
        f"  git sha:      {info['git_sha']}",
        f"  build type:   {info['build_type']}",
        f"  CUDA:         {onoff(info['cuda'])}" + (
            f" (archs: {info['cuda_archs']}, cuBLAS: {onoff(info['cublas'])})" if info["cuda"] else ""),
        f"  BLAS:         {onoff(info['blas'])}",
        f"  OpenMP:       {onoff(info['openmp'])}",
        f"  CPU variants: {info['cpu_variants'].replace(';', ', ')}",
        f"  profiler:     {onoff(info['profiler'])}",
        f"  functional:   {onoff(info['functional'])}",
        f"  libraries:    {info['libraries']}",
    ]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
