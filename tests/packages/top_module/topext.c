/* topext: a module at the top of the wheel; its version string comes from CMake. */
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}

static PyMethodDef topext_methods[] = {{"add", add, METH_VARARGS, "a + b"}, {NULL, NULL, 0, NULL}};

static struct PyModuleDef topext_module = {PyModuleDef_HEAD_INIT, "topext", NULL, 0, topext_methods};

PyMODINIT_FUNC PyInit_topext(void) {
    PyObject *module = PyModule_Create(&topext_module);
    if (module && PyModule_AddStringConstant(module, "version", TOPEXT_VERSION) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
