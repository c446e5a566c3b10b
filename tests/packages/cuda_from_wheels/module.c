#define PY_SSIZE_T_CLEAN
#include <Python.h>

int cfw_runtime_version(void);
const char* cfw_launch(void);

static PyObject* runtime_version(PyObject* self, PyObject* unused) { return PyLong_FromLong(cfw_runtime_version()); }
static PyObject* launch(PyObject* self, PyObject* unused) { return PyUnicode_FromString(cfw_launch()); }

static PyMethodDef methods[] = {
    {"runtime_version", runtime_version, METH_NOARGS, "cudaRuntimeGetVersion()"},
    {"launch", launch, METH_NOARGS, "launch a kernel; the CUDA error name"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cuda_from_wheels", NULL, -1, methods};

PyMODINIT_FUNC PyInit_cuda_from_wheels(void) {
  PyObject* m = PyModule_Create(&module);
  if (m != NULL) PyModule_AddStringConstant(m, "toolkit_version", TOOLKIT_VERSION);
  return m;
}
