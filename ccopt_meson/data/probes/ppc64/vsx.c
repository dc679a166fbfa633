/* VSX: VSX double-precision vectors plus VSX unaligned loads/stores. */
#ifndef __VSX__
    #error "VSX is not supported"
#endif
#include <altivec.h>

int ccopt_probe_vsx(double *src, float *dst);
int ccopt_probe_vsx(double *src, float *dst)
{
    __vector double a = vec_vsx_ld(0, src);
    __vector double b = vec_madd(a, a, vec_sqrt(a));
    __vector float f = vec_xl(0, dst);
    vec_vsx_st(vec_max(a, b), 0, src);
    vec_xst(vec_madd(f, f, f), 0, dst);
    return (int)vec_extract(vec_div(b, a), 1) + vec_all_gt(a, b);
}
