#define PY_SSIZE_T_CLEAN
#include <Python.h>

int cfw_runtime_version(void);
int cfw_curand_version(void);
const char* cfw_launch(void);
const char* cfw_curand_generate(void);

static PyObject* runtime_version(PyObject* self, PyObject* unused) { return PyLong_FromLong(cfw_runtime_version()); }
static PyObject* curand_version(PyObject* self, PyObject* unused) { return PyLong_FromLong(cfw_curand_version()); }
static PyObject* launch(PyObject* self, PyObject* unused) { return PyUnicode_FromString(cfw_launch()); }
static PyObject* curand_generate(PyObject* self, PyObject* unused) {
  return PyUnicode_FromString(cfw_curand_generate());
}

#ifdef CFW_WITH_CUBLAS
int cfw_cublas_version(void);
const char* cfw_cublas_create(void);
static PyObject* cublas_version(PyObject* self, PyObject* unused) { return PyLong_FromLong(cfw_cublas_version()); }
static PyObject* cublas_create(PyObject* self, PyObject* unused) { return PyUnicode_FromString(cfw_cublas_create()); }
#endif

static PyMethodDef methods[] = {
    {"runtime_version", runtime_version, METH_NOARGS, "cudaRuntimeGetVersion()"},
    {"curand_version", curand_version, METH_NOARGS, "curandGetVersion(): needs no GPU"},
    {"launch", launch, METH_NOARGS, "launch a kernel; the CUDA error name"},
    {"curand_generate", curand_generate, METH_NOARGS, "uniform numbers on the GPU; the cuRAND status"},
#ifdef CFW_WITH_CUBLAS
    {"cublas_version", cublas_version, METH_NOARGS, "cublasGetProperty(): needs no GPU"},
    {"cublas_create", cublas_create, METH_NOARGS, "cublasCreate(); the cuBLAS status name"},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", NULL, -1, methods};

PyMODINIT_FUNC PyInit__core(void) {
  PyObject* m = PyModule_Create(&module);
  if (m != NULL) PyModule_AddStringConstant(m, "toolkit_version", TOOLKIT_VERSION);
  return m;
}
