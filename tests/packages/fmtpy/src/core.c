#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fmtlike/c_api.h"

static PyObject* fmtpy_format(PyObject* self, PyObject* args) {
  const char* pattern;
  long value;
  if (!PyArg_ParseTuple(args, "sl", &pattern, &value)) return NULL;
  char out[256];
  size_t n = fmtlike_format(pattern, value, out, sizeof out);
  return PyUnicode_FromStringAndSize(out, n < sizeof out ? (Py_ssize_t)n : (Py_ssize_t)(sizeof out - 1));
}

static PyMethodDef methods[] = {{"format", fmtpy_format, METH_VARARGS, "Replace {} in the pattern by the number."},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, methods};

PyMODINIT_FUNC PyInit__core(void) { return PyModule_Create(&module); }
