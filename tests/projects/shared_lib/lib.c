/* The library's one exported function: checks that ccopt's run-time it calls is its own copy (its own
 * table: the count and the names of its ids), that its dispatcher works, and runs its own SSE4.1 file. */
#include <stdio.h>

#include "ccopt_cpu.h"
#include "sum.dispatch.h"
#ifdef HAVE_SUM_SSE41
#include "x86/sum_sse41.h"
#endif

#define CAT2(A, B) A##_##B
#define CAT(A, B) CAT2(A, B)

CCOPT_DISPATCH_DECLARE(sum_dispatch, int, sum, (const int *v, size_t n))
CCOPT_DISPATCH_DEFINE(sum_dispatch, int, sum, (const int *v, size_t n), (v, n))

__attribute__((visibility("default"))) int CAT(LIBNAME, check)(char *out, size_t len)
{
    static const int v[5] = {1, 2, 3, 4, 5};
    int isa = 0;
    ccopt_cpu_init();
#ifdef HAVE_SUM_SSE41
    if (CCOPT_CPU_HAVE(SSE41)) /* the library's own check for its own per-ISA file */
        isa = sum_sse41(v, 5) == 15 ? 1 : -1;
#endif
    snprintf(out, len, "count=%d adx=%d pick=%s runs=%d sse41file=%d", ccopt_cpu_count(),
             ccopt_cpu_id("ADX") >= 0, CCOPT_DISPATCH_TARGET_NAME(sum_dispatch, sum),
             CCOPT_DISPATCH_RUNS(sum_dispatch), isa);
    if (ccopt_cpu_count() != CCOPT_CPU_MAX_FEATURE) /* another library's run-time answered */
        return 1;
    return sum(v, 5) == 15 && isa >= 0 ? 0 : 2;
}
