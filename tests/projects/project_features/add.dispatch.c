/*@targets baseline #carry */
#include "ccopt_config.h" /* this target's CCOPT_HAVE_<F> and intrinsics headers */
#include "ccopt_dispatch.h"

unsigned int CCOPT_FN(add2)(const unsigned int *a, unsigned int *sum);
unsigned int CCOPT_FN(add2)(const unsigned int *a, unsigned int *sum)
{
#ifdef CCOPT_HAVE_ADX
    unsigned char c = _addcarryx_u32(0, a[0], a[2], &sum[0]);
    _addcarryx_u32(c, a[1], a[3], &sum[1]);
#else
    unsigned long long x = ((unsigned long long)a[1] << 32 | a[0]) + ((unsigned long long)a[3] << 32 | a[2]);
    sum[0] = (unsigned int)x;
    sum[1] = (unsigned int)(x >> 32);
#endif
    return sum[1];
}
