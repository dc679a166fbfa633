/* The dispatcher of simd.dispatch.c (one dispatch header per translation unit). */
#include "simd.dispatch.h"

CCOPT_DISPATCH_DECLARE(simd_dispatch, const char *, simd_name, (void))
CCOPT_DISPATCH_DEFINE(simd_dispatch, const char *, simd_name, (void), ())

const char *simd_version(void);
const char *simd_version(void)
{
    return CCOPT_DISPATCH_TARGET_NAME(simd_dispatch, simd_name);
}
