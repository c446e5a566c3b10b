/* _mod: value() says which build of the source the interpreter imported. */
#include <Python.h>
#include <stdlib.h>

#define VALUE 1
#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)

/* Read through the C library, which the compiler does not fold away: a module that uses no
   libc symbol has no libc in its dynamic section, and auditwheel (in `buildkit wheels`) then
   cannot tell which C library its wheel needs ("couldn't detect libc"). */
static PyObject *value(PyObject *self, PyObject *unused) { return PyLong_FromLong(strtol(TEXT(VALUE), NULL, 10)); }

static PyMethodDef methods[] = {{"value", value, METH_NOARGS, "the build's value"}, {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mod", NULL, 0, methods};

PyMODINIT_FUNC PyInit__mod(void) { return PyModule_Create(&module); }
