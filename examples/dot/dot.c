/* The caller side: declares every compiled version and defines the dispatcher. */
#include "dot.h"
#include "dot.dispatch.h"

CCOPT_DISPATCH_DECLARE(float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, dot_kernel, (void))
CCOPT_DISPATCH_DEFINE(float, dot, (const float *a, const float *b, size_t n), (a, b, n))

const char *dot_target(void) { return CCOPT_DISPATCH_TARGET_NAME(dot); }
