"""`tensorlet-functional`: a small demonstration of vmap() and grad()."""

from __future__ import annotations

import argparse
import sys


def main(argv: "list[str] | None" = None) -> int:
    p = argparse.ArgumentParser(prog="tensorlet-functional", description=__doc__)
    p.add_argument("--size", type=int, default=3, help="batch size of the vmap demo")
    a = p.parse_args(argv)
    import tensorlet
    from tensorlet.functional import grad, vmap

    xs = tensorlet.arange(a.size * 2, dtype=tensorlet.float64).view(a.size, 2)
    norms = vmap(lambda v: (v * v).sum())(xs)
    print(f"xs = {xs.tolist()}")
    print(f"vmap(sum of squares)(xs) = {norms.tolist()}")
    x = tensorlet.tensor([1.0, 2.0, 3.0], dtype=tensorlet.float64)
    print(f"grad(sum(x**3))({x.tolist()}) = {grad(lambda v: (v * v * v).sum())(x).tolist()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
