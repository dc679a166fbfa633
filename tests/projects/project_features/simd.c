/* The dispatcher of simd.dispatch.c (one dispatch header per translation unit). */
#include "simd.dispatch.h"

CCOPT_DISPATCH_DECLARE(const char *, simd_name, (void))
CCOPT_DISPATCH_DEFINE(const char *, simd_name, (void), ())

const char *simd_version(void);
const char *simd_version(void)
{
    return CCOPT_DISPATCH_TARGET_NAME(simd_name);
}
