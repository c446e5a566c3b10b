#define PY_SSIZE_T_CLEAN
#include <Python.h>

int cro_runtime_version(void);

static PyObject* runtime_version(PyObject* self, PyObject* unused) { return PyLong_FromLong(cro_runtime_version()); }

static PyMethodDef methods[] = {
    {"runtime_version", runtime_version, METH_NOARGS, "cudaRuntimeGetVersion()"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, methods};

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&module); }
