/* VSX4 (POWER10, ISA 3.1): vector modulo/high multiply, mask extraction and masked bit counts. */
#ifndef __VSX__
    #error "VSX is not supported"
#endif
#include <altivec.h>

int ccopt_probe_vsx4(unsigned int *src, unsigned long long *dst);
int ccopt_probe_vsx4(unsigned int *src, unsigned long long *dst)
{
    __vector unsigned int a = vec_xl(0, src);
    __vector unsigned int m = vec_mod(a, vec_splats(src[4] | 1u));
    __vector unsigned long long q = vec_xl(0, dst);
    __vector unsigned long long z = vec_cnttzm(vec_cntlzm(q, q), vec_pdep(q, q));
    vec_xst(vec_mulh(m, a), 0, src);
    vec_xst(z, 0, dst);
    return (int)vec_extractm(m) + (int)vec_cntm(vec_genwm(vec_extractm(a)), 1);
}
