/*
 * A library loaded with dlopen by keyed_dlopen.c, built twice (-DPLUG=plug1, plug2),
 * not linked with libcauseway: its trace points bind to the program's. It has keyed
 * trace points (PLUG_top calls PLUG_leaf twice, each a CW_SPAN) and, when built with
 * -fpatchable-function-entry=5, one patched entry (PLUG_entry); the spans' functions
 * opt out of the patched entries so each call is counted once.
 */
#define CW_KEYED
#include "causeway.h"

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define NAME(x) CAT(PLUG, x)
#define STR2(x) #x
#define STR(x) STR2(x)
#define NOPFE __attribute__((noinline, patchable_function_entry(0, 0)))

NOPFE long NAME(leaf)(long x)
{
    CW_SPAN(STR(PLUG) "_leaf");
    return x * 3 + 1;
}

NOPFE long NAME(top)(long x)
{
    CW_SPAN(STR(PLUG) "_top");
    return NAME(leaf)(x) + NAME(leaf)(x + 1);
}

__attribute__((noinline, aligned(16))) long NAME(entry)(long x) { return x * 2 + 1; }
