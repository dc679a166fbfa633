/* The tiny kernel: one add, so that a call costs the call itself. */
#include "ccopt_dispatch.h"

int CCOPT_FN(step)(int x) { return x + 1; }
