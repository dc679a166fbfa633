/* FMA4 (AMD): four-operand fused multiply-add/subtract. */
/* MSVC declares the AMD intrinsics in ammintrin.h; clang-cl defines _MSC_VER too, but its ammintrin.h
 * has only SSE4a, and its x86intrin.h has them once the flag defines the feature's macro */
#if defined(_MSC_VER) && !defined(__clang__)
    #include <ammintrin.h>
#else
    #include <x86intrin.h>
#endif

int ccopt_probe_fma4(const float *src, float *dst);
int ccopt_probe_fma4(const float *src, float *dst)
{
    __m256 a = _mm256_loadu_ps(src);
    __m256 b = _mm256_macc_ps(a, a, _mm256_set1_ps(1.0f));
    __m128d d = _mm_nmsub_sd(_mm_set_sd((double)src[8]), _mm_set_sd(2.0), _mm_set_sd(3.0));
    _mm256_storeu_ps(dst, _mm256_msubadd_ps(a, b, a));
    return _mm256_movemask_ps(b) + _mm_cvttsd_si32(d);
}
