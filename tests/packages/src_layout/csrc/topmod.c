/* topmod: a top-level extension module, installed at the wheel's root. */
#include <Python.h>

static PyObject *answer(PyObject *self, PyObject *unused) { return PyLong_FromLong(42); }

static PyMethodDef topmod_methods[] = {{"answer", answer, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};

static struct PyModuleDef topmod_module = {PyModuleDef_HEAD_INIT, "topmod", NULL, 0, topmod_methods};

PyMODINIT_FUNC PyInit_topmod(void) { return PyModule_Create(&topmod_module); }
