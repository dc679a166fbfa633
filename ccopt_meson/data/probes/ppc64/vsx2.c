/* VSX2 (POWER8, ISA 2.07): 64-bit integer vector arithmetic and compares. */
#ifndef __VSX__
    #error "VSX is not supported"
#endif
#include <altivec.h>

int ccopt_probe_vsx2(unsigned long long *src, int n);
int ccopt_probe_vsx2(unsigned long long *src, int n)
{
    __vector unsigned long long a = vec_xl(0, src);
    __vector unsigned long long b = vec_add(a, vec_splats((unsigned long long)n));
    __vector __bool long long m = vec_cmpeq(vec_max(a, b), vec_sl(b, a));
    __vector unsigned int p = vec_popcnt(vec_splats((unsigned int)n));
    vec_xst(vec_sub(b, vec_mergeh(a, b)), 0, src);
    return vec_any_ne(a, b) + (int)vec_extract(m, 0) + (int)vec_extract(p, 1);
}
