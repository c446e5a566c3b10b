#include <Python.h>

/* The whole extension module: the real code lives in libminimal_python. */
extern PyObject* minimal_python_init_module(void);

PyMODINIT_FUNC PyInit__C(void) { return minimal_python_init_module(); }
