/* LSX: LoongArch 128-bit SIMD integer and float arithmetic. */
#include <lsxintrin.h>

int ccopt_probe_lsx(int *src, float *dst);
int ccopt_probe_lsx(int *src, float *dst)
{
    __m128i a = __lsx_vld(src, 0);
    __m128i b = __lsx_vadd_w(a, __lsx_vreplgr2vr_w(src[4]));
    __m128 f = __lsx_vfmul_s(__lsx_vffint_s_w(b), (__m128)__lsx_vld(dst, 0));
    __lsx_vst(__lsx_vmax_w(a, b), src, 0);
    __lsx_vst((__m128i)f, dst, 0);
    return __lsx_vpickve2gr_w(b, 1);
}
