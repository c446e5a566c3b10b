// rebuildme._native: answer(), from answer.cpp.
#include <Python.h>

#include "answer.h"

static PyObject *answer(PyObject *, PyObject *) { return PyLong_FromLong(rebuildme_answer()); }

static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, "the build's answer"}, {nullptr, nullptr, 0, nullptr}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native", nullptr, 0, methods};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
