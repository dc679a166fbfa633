/* X86_V3 (x86-64-v3): AVX2 + FMA3 + F16C together with BMI, BMI2, LZCNT and MOVBE. */
#include <immintrin.h>
/* newer clang accepts _lzcnt_u32 without -mlzcnt, gcc has no MOVBE intrinsic: check the macros too */
#if defined(__GNUC__) && !(defined(__BMI__) && defined(__BMI2__) && defined(__LZCNT__) && defined(__MOVBE__))
    #error "BMI, BMI2, LZCNT and MOVBE must all be enabled"
#endif

int ccopt_probe_x86_v3(const float *src, unsigned int *dst);
int ccopt_probe_x86_v3(const float *src, unsigned int *dst)
{
    unsigned int x = dst[0];
    __m256 a = _mm256_fmadd_ps(_mm256_loadu_ps(src), _mm256_set1_ps(2.0f), _mm256_loadu_ps(src + 8));
    __m256i b = _mm256_add_epi32(_mm256_castps_si256(a), _mm256_castps_si256(a));
    x = _bzhi_u32(x, 9) + _pdep_u32(x, 0x0f0f0f0fu);
    x += _lzcnt_u32(x) + _tzcnt_u32(x) + _andn_u32(x, dst[1]) + _blsr_u32(x);
#if defined(__clang__)
    x += (unsigned int)_loadbe_i32(dst + 3);
#endif
    dst[2] = x;
    return _mm256_movemask_epi8(b) + _mm_cvtsi128_si32(_mm256_cvtps_ph(a, 0));
}
