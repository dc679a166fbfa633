/* VX (z13, arch11): z/Architecture vector facility, double and integer vectors. */
#if (__VEC__ < 10301) || (__ARCH__ < 11)
    #error "VX (arch11 vector facility with -mzvector) is not enabled"
#endif
/* clang's <vecintrin.h> has no include guard: include it only once per TU */
#ifndef __VEC_CLASS_FP_ZERO
    #include <vecintrin.h>
#endif

int ccopt_probe_vx(double *src, int *dst);
int ccopt_probe_vx(double *src, int *dst)
{
    __vector double a = vec_xl(0, src);
    __vector double b = vec_madd(a, a, vec_sqrt(a));
    __vector signed int i = vec_xl(0, dst);
    i = (i + vec_splats(3)) - vec_rli(i, 7);
    vec_xst(vec_max(a, b), 0, src);
    vec_xst(vec_sel(i, vec_splats(-1), vec_cmpgt(i, vec_splats(0))), 0, dst);
    return (int)vec_extract(b, 1) + vec_all_ge(a, b) + vec_extract(i, 2);
}
