/* srcpkg._core: one function, enough to tell that the built module is the one imported. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *triple(PyObject *self, PyObject *arg) {
    long value = PyLong_AsLong(arg);
    if (value == -1 && PyErr_Occurred()) return NULL;
    return PyLong_FromLong(3 * value);
}

static PyMethodDef core_methods[] = {
    {"triple", triple, METH_O, "Three times an integer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {PyModuleDef_HEAD_INIT, "_core", NULL, 0, core_methods};

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&core_module); }
