/* VXE2 (z15, arch13): vector enhancements 2, shift-double-by-bit, int<->float conversions, string search. */
#if (__VEC__ < 10303) || (__ARCH__ < 13)
    #error "VXE2 (arch13 vector enhancements 2) is not enabled"
#endif
/* clang's <vecintrin.h> has no include guard: include it only once per TU */
#ifndef __VEC_CLASS_FP_ZERO
    #include <vecintrin.h>
#endif

int ccopt_probe_vxe2(int *src, float *dst);
int ccopt_probe_vxe2(int *src, float *dst)
{
    __vector signed int a = vec_xl(0, src);
    __vector signed int b = vec_sldb(a, vec_srdb(a, a, 3), 5);
    __vector float f = vec_float(b);
    __vector unsigned char s = vec_xl(16, (unsigned char *)(void *)src);
    __vector unsigned char k = vec_splats((unsigned char)7);
    int cc = 0;
    __vector unsigned char r = vec_search_string_cc(s, k, k, &cc);
    vec_xst(f, 0, dst);
    return cc + (int)vec_extract(r, 7) + vec_extract(vec_signed(f), 0);
}
