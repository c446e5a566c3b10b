#include <Python.h>

/* The `cuext._C` module: the code lives in libcuext_python. */
extern PyObject* cuext_python_init_module(void);

PyMODINIT_FUNC PyInit__C(void) { return cuext_python_init_module(); }
