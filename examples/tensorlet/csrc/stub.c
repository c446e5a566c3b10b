/* The `tensorlet._C` extension itself is only this stub: all code lives in
 * libtensorlet_python.so (found through the $ORIGIN/lib rpath), so the
 * extension is tiny and the native libraries can be shared with C++ users. */
#include <Python.h>

extern PyObject* tensorlet_python_init_module(void);

PyMODINIT_FUNC PyInit__C(void) { return tensorlet_python_init_module(); }
