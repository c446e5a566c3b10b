#include <Python.h>

/* The whole extension module: the real code lives in libcuda_minimal_python. */
extern PyObject* cuda_minimal_python_init_module(void);

PyMODINIT_FUNC PyInit__C(void) { return cuda_minimal_python_init_module(); }
