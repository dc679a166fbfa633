/* LASX: LoongArch 256-bit SIMD integer and float arithmetic. */
#include <lasxintrin.h>

int ccopt_probe_lasx(int *src, float *dst);
int ccopt_probe_lasx(int *src, float *dst)
{
    __m256i a = __lasx_xvld(src, 0);
    __m256i b = __lasx_xvadd_w(a, __lasx_xvreplgr2vr_w(src[8]));
    __m256 f = __lasx_xvfmul_s(__lasx_xvffint_s_w(b), (__m256)__lasx_xvld(dst, 0));
    __lasx_xvst(__lasx_xvmax_w(a, b), src, 0);
    __lasx_xvst((__m256i)f, dst, 0);
    return __lasx_xvpickve2gr_w(b, 5);
}
