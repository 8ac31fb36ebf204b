/*
 * A program built with -fpatchable-function-entry=5 that references nothing of
 * libcauseway (no causeway.h, no cw_* call): whether the library runs in it at all
 * depends on the link line alone. Prints the first five bytes of `outer` (in hex) as
 * the program sees them inside main, then the sum of its calls:
 *   "9090909090 SUM"  the compiler's five one-byte nops: nothing patched it
 *   "e9xxxxxxxx SUM"  a jump to the site's stub in the library: patched, tracing on
 * The test runs it with CAUSEWAY_TRIGGER=exit and reads the dump written at exit.
 */
#include <stdio.h>
#include <string.h>

#define TRACED __attribute__((noinline, noipa))
#define NOPATCH __attribute__((patchable_function_entry(0, 0), noinline))

TRACED long inner(long x) { return x * 2 + 1; }
TRACED long outer(long x) { return inner(x) + inner(x + 1); }

NOPATCH int main(void)
{
    unsigned char b[5];
    memcpy(b, (const void *)outer, sizeof b);
    long s = 0;
    for (int i = 0; i < 500; i++)
        s += outer(i);
    printf("%02x%02x%02x%02x%02x %ld\n", b[0], b[1], b[2], b[3], b[4], s);
    return 0;
}
