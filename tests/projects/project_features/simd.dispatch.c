/*@targets #simd_test */
#include "ccopt_dispatch.h"

const char *CCOPT_FN(simd_name)(void);
const char *CCOPT_FN(simd_name)(void)
{
    return "simd";
}
