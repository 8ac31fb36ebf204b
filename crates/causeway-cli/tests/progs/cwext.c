/*
 * A Python extension module with native keyed trace points (causeway.h, CW_KEYED),
 * linked with libcauseway.so: imported after tracing started, its trace points are
 * found by the library (cw_rescan, or the control thread's next tick). work(n) is a
 * span that calls leaf() n times, each a span of its own; it returns the sum of
 * 3i + 1 over i < n.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define CW_KEYED
#include "causeway.h"

__attribute__((noinline)) static long leaf(long x)
{
    CW_SPAN("cwext_leaf");
    return x * 3 + 1;
}

static PyObject *work(PyObject *self, PyObject *arg)
{
    (void)self;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    long s = 0;
    {
        CW_SPAN("cwext_work");
        for (long i = 0; i < n; i++)
            s += leaf(i);
    }
    return PyLong_FromLong(s);
}

static PyMethodDef methods[] = {
    {"work", work, METH_O, "work(n): the sum of 3i + 1 over i < n, traced."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cwext", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_cwext(void) { return PyModule_Create(&module); }
