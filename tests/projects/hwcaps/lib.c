/* The library's exported functions: which build of it the loader picked (its baseline, from the
 * ccopt_kernel.h it was compiled with), the version of its dispatched kernel the CPU runs, and a loop the
 * compiler vectorises for the level the library is built at. */
#include <stddef.h>

#include "ccopt_kernel.h"
#include "sum.dispatch.h"

CCOPT_DISPATCH_DECLARE(sum_dispatch, int, sum, (const int *v, size_t n))
CCOPT_DISPATCH_DEFINE(sum_dispatch, int, sum, (const int *v, size_t n), (v, n))

__attribute__((visibility("default"))) const char *hw_baseline(void)
{
    return CCOPT_WITH_CPU_BASELINE;
}

__attribute__((visibility("default"))) const char *hw_pick(void)
{
    static const int v[5] = {1, 2, 3, 4, 5};
    return sum(v, 5) == 15 ? CCOPT_DISPATCH_TARGET_NAME(sum_dispatch, sum) : "WRONG";
}

__attribute__((visibility("default"))) void hw_scale(float *out, const float *in, size_t n, float k)
{
    size_t i;
    for (i = 0; i < n; i++)
        out[i] = in[i] * k + 1.0f;
}
