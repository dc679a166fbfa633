/* VXE (z14, arch12): vector enhancements 1, single-precision float vectors, nand/eqv/msum. */
#if (__VEC__ < 10302) || (__ARCH__ < 12)
    #error "VXE (arch12 vector enhancements 1) is not enabled"
#endif
/* clang's <vecintrin.h> has no include guard: include it only once per TU */
#ifndef __VEC_CLASS_FP_ZERO
    #include <vecintrin.h>
#endif

int ccopt_probe_vxe(float *src, unsigned long long *dst);
int ccopt_probe_vxe(float *src, unsigned long long *dst)
{
    __vector float a = vec_xl(0, src);
    __vector float b = vec_nmadd(a, a, vec_sqrt(a));
    __vector unsigned long long u = vec_xl(0, dst);
    u = vec_eqv(vec_nand(u, u), u);
    vec_xst(vec_max(a * b, a), 0, src);
    vec_xst(u, 0, dst);
    return (int)vec_extract(b, 3) + vec_any_lt(a, b) + (int)vec_extract(u, 1);
}
