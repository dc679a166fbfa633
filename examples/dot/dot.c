/* The caller side: declares every compiled version and defines the dispatchers.
 * Each macro names the dispatch source whose target list it uses (dot.dispatch.c is
 * dot_dispatch), so the headers can be included together, in any order. */
#include "dot.h"

#include "dot.dispatch.h"
#include "i8dot.dispatch.h"
#include "poly.dispatch.h"

CCOPT_DISPATCH_DECLARE(dot_dispatch, float, dot, (const float *a, const float *b, size_t n))
CCOPT_DISPATCH_DEFINE(dot_dispatch, float, dot, (const float *a, const float *b, size_t n), (a, b, n))
const char *dot_target(void) { return CCOPT_DISPATCH_TARGET_NAME(dot_dispatch, dot); }

CCOPT_DISPATCH_DECLARE(poly_dispatch, float, poly_sum, (const float *x, size_t n))
CCOPT_DISPATCH_DEFINE(poly_dispatch, float, poly_sum, (const float *x, size_t n), (x, n))
const char *poly_target(void) { return CCOPT_DISPATCH_TARGET_NAME(poly_dispatch, poly_sum); }

CCOPT_DISPATCH_DECLARE(i8dot_dispatch, int32_t, i8dot, (const int8_t *a, const int8_t *b, size_t n))
CCOPT_DISPATCH_DEFINE(i8dot_dispatch, int32_t, i8dot, (const int8_t *a, const int8_t *b, size_t n), (a, b, n))
const char *i8dot_target(void) { return CCOPT_DISPATCH_TARGET_NAME(i8dot_dispatch, i8dot); }
