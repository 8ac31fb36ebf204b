// Calls the inline function 10 times from each translation unit, dumps, and prints
// the sum, the keyed sites the library switched and the trace.
#include "shared.hpp"

#include <cstdio>

long from_a(long x);

int main()
{
    long s = 0;
    for (long i = 0; i < 10; i++)
        s += from_a(i) + shared_fn(i);
    int dumped = cw_dump("keyed-cxx");
    std::printf("%ld %llu %d %s\n", s, (unsigned long long)cw_keyed_sites(), dumped,
                cw_last_dump() ? cw_last_dump() : "-");
    return 0;
}
