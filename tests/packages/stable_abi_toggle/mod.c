/* _mod: value() says which build of the source the interpreter imported. */
#include <Python.h>

#define VALUE 1

static PyObject *value(PyObject *self, PyObject *unused) { return PyLong_FromLong(VALUE); }

static PyMethodDef methods[] = {{"value", value, METH_NOARGS, "the build's value"}, {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mod", NULL, 0, methods};

PyMODINIT_FUNC PyInit__mod(void) { return PyModule_Create(&module); }
