/* mixed.c: the API: a dispatcher per kernel under the library's own names, and the baseline check. */
#include "mixed.h"

#include "scale.dispatch.h"
#include "sum.dispatch.h"

CCOPT_DISPATCH_DECLARE(sum_dispatch, int, sum, (const int *v, int n))
CCOPT_DISPATCH_DECLARE(scale_dispatch, float, scale_sum, (const float *v, int n, float k))
CCOPT_DISPATCH_DEFINE_AS(sum_dispatch, int, mixed_sum, sum, (const int *v, int n), (v, n))
CCOPT_DISPATCH_DEFINE_AS(scale_dispatch, float, mixed_scale_sum, scale_sum, (const float *v, int n, float k),
                         (v, n, k))

const char *mixed_unsupported(void)
{
    return ccopt_cpu_baseline_message(); /* compiled for the baseline too: a call and a return, nothing else */
}
