#include "shared.hpp"

long from_a(long x) { return shared_fn(x) + 1; }
