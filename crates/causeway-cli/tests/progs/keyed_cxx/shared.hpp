// A keyed span in a C++ inline function: both translation units emit a copy in a
// COMDAT group and the linker keeps one, so the cw_keys entries of the other copy
// must go with it (they are linked to its section).
#define CW_KEYED
#include "causeway.h"

inline long shared_fn(long x)
{
    CW_SPAN("shared_fn");
    return x * 7;
}
