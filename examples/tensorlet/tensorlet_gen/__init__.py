"""Code generator for tensorlet: reads ops.yaml and derivatives.yaml and writes
the operator registrations, the typed C++ API, the autograd kernels and the
CPython bindings. Run as ``python -m tensorlet_gen --ops ops.yaml
--derivatives derivatives.yaml --out <build>/generated``."""
