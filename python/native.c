/*
 * causeway._native - the C half of the `causeway` Python package (python/causeway/),
 * over libcauseway: traces Python calls into the same per-thread ring buffers as the
 * native trace points, with the same triggers.
 *
 * 3.12 and newer: sys.monitoring. PY_START, PY_RESUME and PY_THROW are entries,
 * PY_RETURN, PY_YIELD and PY_UNWIND exits; the local events return DISABLE for code
 * outside the selected modules, so such code costs nothing after its first call.
 * 3.11: a frame evaluation hook (PEP 523) by default, which wraps each Python frame's
 * evaluation with an entry and an exit and keeps the interpreter out of its tracing
 * mode; or, with CAUSEWAY_PY_HOOK=setprofile, a C profile function (PyEval_SetProfile)
 * on every thread, which makes every call build a frame object (about twice the cost).
 *
 * Function ids are addresses of `struct cw_site` records (the CW_SPAN mechanism of
 * causeway.h): one per code object, holding "qualname (file:line)". The dump reads
 * the name through the id as it does for CW_SPAN sites, so the trace format does not
 * change. Sites live in MAP_32BIT memory when the kernel gives it, so an id fits one
 * 32-bit slot, and they are never freed: a buffer may name them until it is dumped.
 * See docs/libcauseway.md, "Python".
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <string.h>
#include <sys/mman.h>

#include "causeway.h"

#if PY_VERSION_HEX < 0x030C0000
/* 3.11's frame evaluation hook (PEP 523) sees the interpreter's own frame struct. */
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE
#endif

#if PY_VERSION_HEX < 0x030B0000
#error "the causeway module needs Python 3.11 or newer"
#endif

#if PY_VERSION_HEX >= 0x030C0000
#define CW_MONITORING 1
#define code_get_extra PyUnstable_Code_GetExtra
#define code_set_extra PyUnstable_Code_SetExtra
#define request_extra_index PyUnstable_Eval_RequestCodeExtraIndex
#else
#define CW_MONITORING 0
#define code_get_extra _PyCode_GetExtra
#define code_set_extra _PyCode_SetExtra
#define request_extra_index _PyEval_RequestCodeExtraIndex
#endif

/* Names are cut to this many bytes (on a UTF-8 boundary): the dump reads at most 512. */
#define NAME_MAX_BYTES 500
/* co_extra value of a code object outside the selection. */
#define SKIP ((void *)1)

static Py_ssize_t extra_index = -1;
static char *arena;
static size_t arena_left;
/* Selected module prefixes (NULL: every module), fixed at the first start(). */
static char **prefixes;
static Py_ssize_t nprefixes;
static int selection_fixed;
static int tracing;
#if CW_MONITORING
static int tool_id = -1;
static PyObject *disable_obj;
#endif

/* ---- names and sites ---------------------------------------------------------------- */

/* "qualname (file:line)" as UTF-8 bytes, cut to NAME_MAX_BYTES. New reference. */
static PyObject *code_name(PyCodeObject *co)
{
    PyObject *s = PyUnicode_FromFormat("%U (%U:%d)", co->co_qualname, co->co_filename,
                                       co->co_firstlineno);
    if (s == NULL)
        return NULL;
    PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace");
    Py_DECREF(s);
    if (b == NULL || PyBytes_GET_SIZE(b) <= NAME_MAX_BYTES)
        return b;
    const char *p = PyBytes_AS_STRING(b);
    Py_ssize_t n = NAME_MAX_BYTES;
    while (n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80)
        n--;
    PyObject *cut = PyBytes_FromStringAndSize(p, n);
    Py_DECREF(b);
    return cut;
}

static struct cw_site *new_site(const char *name, size_t len)
{
    if (arena_left < sizeof(struct cw_site)) {
        size_t sz = 1 << 16;
        void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (m == MAP_FAILED)
            m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        arena = m;
        arena_left = sz;
    }
    char *copy = malloc(len + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, name, len);
    copy[len] = 0;
    struct cw_site *s = (struct cw_site *)arena;
    arena += sizeof *s;
    arena_left -= sizeof *s;
    s->magic = CW_SITE_MAGIC;
    s->name = copy;
    return s;
}

static int module_selected(PyObject *globals)
{
    if (prefixes == NULL)
        return 1;
    PyObject *name = globals ? PyDict_GetItemString(globals, "__name__") : NULL;
    const char *m = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (m == NULL) {
        PyErr_Clear();
        return 0;
    }
    for (Py_ssize_t i = 0; i < nprefixes; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(m, prefixes[i], n) == 0 && (m[n] == 0 || m[n] == '.'))
            return 1;
    }
    return 0;
}

/* The globals of the frame running `code`, if it is the current one. New reference. */
static PyObject *globals_of(PyObject *code, PyFrameObject *frame)
{
    if (frame == NULL)
        frame = PyEval_GetFrame();
    if (frame == NULL)
        return NULL;
    PyCodeObject *fc = PyFrame_GetCode(frame);
    int same = (PyObject *)fc == code;
    Py_DECREF(fc);
    return same ? PyFrame_GetGlobals(frame) : NULL;
}

/* The site of a code object (made at its first call) or SKIP. Never fails: errors
 * leave the code untraced. `globals` (borrowed) or `frame` tell the code's module. */
static void *lookup_in(PyObject *code, PyObject *globals, PyFrameObject *frame)
{
    void *v = NULL;
    if (code_get_extra(code, extra_index, &v) < 0) {
        PyErr_Clear();
        return SKIP;
    }
    if (v != NULL)
        return v;
    v = SKIP;
    if (globals != NULL)
        Py_INCREF(globals);
    else if (prefixes != NULL)
        globals = globals_of(code, frame);
    if (module_selected(globals)) {
        PyObject *b = code_name((PyCodeObject *)code);
        if (b != NULL) {
            struct cw_site *s = new_site(PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
            if (s != NULL)
                v = s;
            Py_DECREF(b);
        }
    }
    Py_XDECREF(globals);
    if (code_set_extra(code, extra_index, v) < 0)
        PyErr_Clear();
    if (PyErr_Occurred())
        PyErr_Clear();
    return v;
}

static void *lookup(PyObject *code, PyFrameObject *frame)
{
    return lookup_in(code, NULL, frame);
}

/* ---- 3.12+: sys.monitoring callbacks -------------------------------------------------- */

#if CW_MONITORING
static PyObject *mon_enter(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    if (n < 1 || !PyCode_Check(args[0]))
        Py_RETURN_NONE;
    void *v = lookup(args[0], NULL);
    if (v == SKIP)
        return Py_NewRef(disable_obj);
    cw_enter((uintptr_t)v);
    Py_RETURN_NONE;
}

static PyObject *mon_exit(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    if (n < 1 || !PyCode_Check(args[0]))
        Py_RETURN_NONE;
    if (lookup(args[0], NULL) == SKIP)
        return Py_NewRef(disable_obj);
    cw_exit();
    Py_RETURN_NONE;
}

/* PY_UNWIND and PY_THROW are not local events: they cannot return DISABLE. */
static PyObject *mon_unwind(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    if (n >= 1 && PyCode_Check(args[0]) && lookup(args[0], NULL) != SKIP)
        cw_exit();
    Py_RETURN_NONE;
}

static PyObject *mon_throw(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    if (n >= 1 && PyCode_Check(args[0])) {
        void *v = lookup(args[0], NULL);
        if (v != SKIP)
            cw_enter((uintptr_t)v);
    }
    Py_RETURN_NONE;
}

static PyMethodDef cb_defs[] = {
    {"_on_enter", (PyCFunction)(void (*)(void))mon_enter, METH_FASTCALL, NULL},
    {"_on_exit", (PyCFunction)(void (*)(void))mon_exit, METH_FASTCALL, NULL},
    {"_on_unwind", (PyCFunction)(void (*)(void))mon_unwind, METH_FASTCALL, NULL},
    {"_on_throw", (PyCFunction)(void (*)(void))mon_throw, METH_FASTCALL, NULL},
};

/* Calls sys.monitoring.NAME(*args) (args is stolen). New reference. */
static PyObject *monitoring_call(const char *name, PyObject *args)
{
    PyObject *res = NULL;
    if (args == NULL)
        return NULL;
    PyObject *mon = PySys_GetObject("monitoring");
    PyObject *f = mon ? PyObject_GetAttrString(mon, name) : NULL;
    if (f != NULL)
        res = PyObject_CallObject(f, args);
    else if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "sys.monitoring is missing");
    Py_XDECREF(f);
    Py_DECREF(args);
    return res;
}

static int monitoring_event(const char *name)
{
    PyObject *mon = PySys_GetObject("monitoring");
    PyObject *ev = mon ? PyObject_GetAttrString(mon, "events") : NULL;
    PyObject *v = ev ? PyObject_GetAttrString(ev, name) : NULL;
    long r = v ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    Py_XDECREF(ev);
    return (int)r;
}

static int take_tool_id(void)
{
    /* PROFILER_ID (2) first; then the ids Python leaves to other tools. */
    static const int ids[] = {2, 3, 4, 5};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        PyObject *r = monitoring_call("use_tool_id", Py_BuildValue("(is)", ids[i], "causeway"));
        if (r != NULL) {
            Py_DECREF(r);
            return ids[i];
        }
        if (!PyErr_ExceptionMatches(PyExc_ValueError))
            return -1;
        PyErr_Clear();
    }
    PyErr_SetString(PyExc_RuntimeError, "no free sys.monitoring tool id");
    return -1;
}

static int start_python_tracing(void)
{
    static const struct {
        const char *event;
        int cb;
    } hooks[] = {{"PY_START", 0},  {"PY_RESUME", 0}, {"PY_RETURN", 1},
                 {"PY_YIELD", 1},  {"PY_UNWIND", 2}, {"PY_THROW", 3}};
    if (disable_obj == NULL) {
        PyObject *mon = PySys_GetObject("monitoring");
        disable_obj = mon ? PyObject_GetAttrString(mon, "DISABLE") : NULL;
        if (disable_obj == NULL)
            return -1;
    }
    tool_id = take_tool_id();
    if (tool_id < 0)
        return -1;
    long mask = 0;
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        int ev = monitoring_event(hooks[i].event);
        if (ev < 0)
            return -1;
        PyObject *fn = PyCFunction_New(&cb_defs[hooks[i].cb], NULL);
        if (fn == NULL)
            return -1;
        PyObject *r = monitoring_call("register_callback", Py_BuildValue("(iiN)", tool_id, ev, fn));
        if (r == NULL)
            return -1;
        Py_DECREF(r);
        mask |= ev;
    }
    PyObject *r = monitoring_call("set_events", Py_BuildValue("(il)", tool_id, mask));
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int stop_python_tracing(void)
{
    PyObject *r = monitoring_call("set_events", Py_BuildValue("(ii)", tool_id, 0));
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    r = monitoring_call("free_tool_id", Py_BuildValue("(i)", tool_id));
    Py_XDECREF(r);
    tool_id = -1;
    return r ? 0 : -1;
}

#else /* 3.11: a C profile function on every thread */

static int on_profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)arg;
    if (what != PyTrace_CALL && what != PyTrace_RETURN)
        return 0;
    PyCodeObject *co = PyFrame_GetCode(frame);
    void *v = lookup((PyObject *)co, frame);
    Py_DECREF(co);
    if (v == SKIP)
        return 0;
    if (what == PyTrace_CALL)
        cw_enter((uintptr_t)v);
    else
        cw_exit();
    return 0;
}

/* threading.setprofile() hook: the first profile event of a new thread replaces the
 * (slow, Python-level) hook by the C profile function and records that event. */
static PyObject *thread_hook(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *frame, *event, *arg;
    if (!PyArg_ParseTuple(args, "OUO", &frame, &event, &arg))
        return NULL;
    PyEval_SetProfile(on_profile, NULL);
    if (PyFrame_Check(frame) && PyUnicode_CompareWithASCIIString(event, "call") == 0)
        on_profile(NULL, (PyFrameObject *)frame, PyTrace_CALL, NULL);
    Py_RETURN_NONE;
}

static PyMethodDef thread_hook_def = {"_thread_hook", thread_hook, METH_VARARGS, NULL};

static int set_threading_profile(PyObject *hook)
{
    PyObject *threading = PyImport_ImportModule("threading");
    if (threading == NULL)
        return -1;
    PyObject *r = PyObject_CallMethod(threading, "setprofile", "O", hook);
    Py_DECREF(threading);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static int set_all_threads(Py_tracefunc f)
{
    PyInterpreterState *is = PyInterpreterState_Get();
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(is); ts; ts = PyThreadState_Next(ts))
        if (_PyEval_SetProfile(ts, f, NULL) < 0)
            return -1;
    return 0;
}

/* PEP 523: with a hook installed, 3.11 no longer inlines Python-to-Python calls, so
 * every frame (and every generator resumption) passes here. */
static PyObject *eval_hook(PyThreadState *ts, struct _PyInterpreterFrame *f, int throwflag)
{
    void *v = lookup_in((PyObject *)f->f_code, f->f_globals, NULL);
    if (v == SKIP)
        return _PyEval_EvalFrameDefault(ts, f, throwflag);
    cw_enter((uintptr_t)v);
    PyObject *r = _PyEval_EvalFrameDefault(ts, f, throwflag);
    cw_exit();
    return r;
}

static int use_setprofile = -1;
static _PyFrameEvalFunction prev_eval;

static const char *mode_name(void)
{
    if (use_setprofile < 0) {
        const char *h = getenv("CAUSEWAY_PY_HOOK");
        use_setprofile = h != NULL && strcmp(h, "setprofile") == 0;
    }
    return use_setprofile ? "setprofile" : "eval-frame";
}

static int start_python_tracing(void)
{
    mode_name();
    if (!use_setprofile) {
        PyInterpreterState *is = PyInterpreterState_Get();
        prev_eval = _PyInterpreterState_GetEvalFrameFunc(is);
        if (prev_eval != _PyEval_EvalFrameDefault && prev_eval != eval_hook) {
            PyErr_SetString(PyExc_RuntimeError,
                            "another frame evaluation hook (PEP 523) is installed; "
                            "set CAUSEWAY_PY_HOOK=setprofile");
            return -1;
        }
        _PyInterpreterState_SetEvalFrameFunc(is, eval_hook);
        return 0;
    }
    PyObject *hook = PyCFunction_New(&thread_hook_def, NULL);
    if (hook == NULL)
        return -1;
    int rc = set_threading_profile(hook);
    Py_DECREF(hook);
    return rc < 0 ? -1 : set_all_threads(on_profile);
}

static int stop_python_tracing(void)
{
    if (!use_setprofile) {
        _PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(), _PyEval_EvalFrameDefault);
        return 0;
    }
    if (set_threading_profile(Py_None) < 0)
        return -1;
    return set_all_threads(NULL);
}
#endif

/* ---- module functions ---------------------------------------------------------------- */

/* Fix the selection from `modules` (a sequence of str, or None: CAUSEWAY_PY_MODULES,
 * unset or empty meaning every module). */
static int fix_selection(PyObject *modules)
{
    PyObject *list = NULL;
    if (modules == Py_None) {
        const char *env = getenv("CAUSEWAY_PY_MODULES");
        if (env == NULL || *env == 0)
            return 0;
        PyObject *s = PyUnicode_FromString(env);
        PyObject *sep = PyUnicode_FromString(",");
        list = s && sep ? PyUnicode_Split(s, sep, -1) : NULL;
        Py_XDECREF(s);
        Py_XDECREF(sep);
    } else if (PyUnicode_Check(modules)) {
        PyErr_SetString(PyExc_TypeError, "modules must be a list of module names, not a str");
        return -1;
    } else {
        list = PySequence_List(modules);
    }
    if (list == NULL)
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(list);
    char **p = calloc((size_t)n + 1, sizeof *p);
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; p && i < n; i++) {
        PyObject *it = PyList_GET_ITEM(list, i);
        const char *c = PyUnicode_Check(it) ? PyUnicode_AsUTF8(it) : NULL;
        if (c == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "modules must hold str");
            Py_DECREF(list);
            return -1;
        }
        while (*c == ' ')
            c++;
        if (*c)
            p[k++] = strdup(c);
    }
    Py_DECREF(list);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    prefixes = k ? p : NULL;
    nprefixes = k;
    if (!k)
        free(p);
    return 0;
}

static PyObject *py_start(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"modules", NULL};
    PyObject *modules = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:start", kwlist, &modules))
        return NULL;
    if (tracing)
        Py_RETURN_NONE;
    if (!selection_fixed) {
        if (fix_selection(modules) < 0)
            return NULL;
        selection_fixed = 1;
    } else if (modules != Py_None) {
        /* Code objects remember whether they are selected (and sys.monitoring keeps the
         * DISABLEd locations), so the selection cannot change after the first start. */
        PyErr_SetString(PyExc_ValueError,
                        "the module selection is fixed by the first start(); call start() "
                        "without modules");
        return NULL;
    }
    if (start_python_tracing() < 0)
        return NULL;
    tracing = 1;
    Py_RETURN_NONE;
}

static PyObject *py_stop(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (tracing && stop_python_tracing() < 0)
        return NULL;
    tracing = 0;
    Py_RETURN_NONE;
}

static PyObject *py_dump(PyObject *self, PyObject *args)
{
    (void)self;
    const char *reason = "python";
    if (!PyArg_ParseTuple(args, "|s:dump", &reason))
        return NULL;
    int rc;
    /* Without the GIL, so the other Python threads reach a trace point and stop
     * cleanly instead of being copied while they wait for it. */
    Py_BEGIN_ALLOW_THREADS
    rc = cw_dump(reason);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
        errno = -rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    const char *path = cw_last_dump();
    if (path == NULL)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(path);
}

static PyObject *py_heartbeat(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    cw_heartbeat();
    Py_RETURN_NONE;
}

static PyObject *py_last_dump(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    const char *path = cw_last_dump();
    if (path == NULL)
        Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(path);
}

static PyObject *py_dump_count(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong(cw_dump_count());
}

static PyObject *py_rescan(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int rc = cw_rescan();
    if (rc < 0) {
        errno = -rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_RETURN_NONE;
}

static PyObject *py_config(PyObject *self, PyObject *args)
{
    (void)self;
    const char *key, *value;
    if (!PyArg_ParseTuple(args, "ss:config", &key, &value))
        return NULL;
    int rc = cw_config(key, value);
    if (rc < 0) {
        errno = -rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_RETURN_NONE;
}

static PyObject *py_tracing(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(tracing);
}

static PyObject *py_name_of(PyObject *self, PyObject *obj)
{
    (void)self;
    PyObject *code = PyCode_Check(obj) ? Py_NewRef(obj) : PyObject_GetAttrString(obj, "__code__");
    if (code == NULL)
        return NULL;
    if (!PyCode_Check(code)) {
        Py_DECREF(code);
        PyErr_SetString(PyExc_TypeError, "name_of needs a function or a code object");
        return NULL;
    }
    PyObject *b = code_name((PyCodeObject *)code);
    Py_DECREF(code);
    if (b == NULL)
        return NULL;
    PyObject *s = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), "replace");
    Py_DECREF(b);
    return s;
}

static PyMethodDef methods[] = {
    {"start", (PyCFunction)(void (*)(void))py_start, METH_VARARGS | METH_KEYWORDS,
     "start(modules=None)\n--\n\nTrace Python calls into libcauseway's buffers. `modules`: "
     "names of the modules (and their submodules) to trace; None reads CAUSEWAY_PY_MODULES "
     "(comma-separated; unset: every module). The selection is fixed by the first call."},
    {"stop", py_stop, METH_NOARGS, "stop()\n--\n\nStop tracing Python calls."},
    {"dump", py_dump, METH_VARARGS,
     "dump(reason='python')\n--\n\nWrite a trace now (cw_dump); returns its path."},
    {"heartbeat", py_heartbeat, METH_NOARGS,
     "heartbeat()\n--\n\nTell the stall watchdog this thread's event loop turned."},
    {"last_dump", py_last_dump, METH_NOARGS,
     "last_dump()\n--\n\nPath of the last trace written, or None."},
    {"dump_count", py_dump_count, METH_NOARGS,
     "dump_count()\n--\n\nNumber of traces written since start-up."},
    {"config", py_config, METH_VARARGS,
     "config(key, value)\n--\n\nChange CAUSEWAY_OUTPUT, CAUSEWAY_MAX_DUMPS or CAUSEWAY_BUFFER."},
    {"tracing", py_tracing, METH_NOARGS, "tracing()\n--\n\nWhether Python calls are traced."},
    {"rescan", py_rescan, METH_NOARGS,
     "rescan()\n--\n\nFind the trace points of extension modules and libraries loaded since "
     "the library last looked, now (it looks by itself every 100 ms)."},
    {"name_of", py_name_of, METH_O,
     "name_of(function)\n--\n\nThe name a function's calls carry in a dump."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "causeway._native",
    "Always-on Python call tracing into libcauseway's per-thread buffers; dumps are "
    "causeway traces (see docs/libcauseway.md).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    if (extra_index < 0) {
        extra_index = request_extra_index(NULL);
        if (extra_index < 0)
            return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
#if CW_MONITORING
    const char *mode = "sys.monitoring";
#else
    const char *mode = mode_name();
#endif
    if (PyModule_AddStringConstant(m, "mode", mode) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
