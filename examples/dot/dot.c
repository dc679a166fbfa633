/* The caller side: declares every compiled version and defines the dispatchers.
 * The macros use the dispatch header included last, so each kernel's declarations
 * and dispatcher follow its own header. */
#include "dot.h"

#include "dot.dispatch.h"
CCOPT_DISPATCH_DECLARE(float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, dot_kernel, (void))
CCOPT_DISPATCH_DEFINE(float, dot, (const float *a, const float *b, size_t n), (a, b, n))

const char *dot_target(void) { return CCOPT_DISPATCH_TARGET_NAME(dot); }

#include "poly.dispatch.h"
CCOPT_DISPATCH_DECLARE(float, poly_sum, (const float *x, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, poly_kernel, (void))
CCOPT_DISPATCH_DEFINE(float, poly_sum, (const float *x, size_t n), (x, n))

const char *poly_target(void) { return CCOPT_DISPATCH_TARGET_NAME(poly_sum); }

#include "i8dot.dispatch.h"
CCOPT_DISPATCH_DECLARE(int32_t, i8dot, (const int8_t *a, const int8_t *b, size_t n))
CCOPT_DISPATCH_DECLARE(const char *, i8dot_kernel, (void))
CCOPT_DISPATCH_DEFINE(int32_t, i8dot, (const int8_t *a, const int8_t *b, size_t n), (a, b, n))

const char *i8dot_target(void) { return CCOPT_DISPATCH_TARGET_NAME(i8dot); }
