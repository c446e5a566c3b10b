#include <Python.h>

/* The `fastvec._C` module: the code lives in libfastvec_python. */
extern PyObject* fastvec_python_init_module(void);

PyMODINIT_FUNC PyInit__C(void) { return fastvec_python_init_module(); }
