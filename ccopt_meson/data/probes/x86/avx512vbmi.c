/* AVX512VBMI: byte permutes across the whole register and multishift. */
#include <immintrin.h>

int ccopt_probe_avx512vbmi(const unsigned char *src, unsigned char *dst);
int ccopt_probe_avx512vbmi(const unsigned char *src, unsigned char *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i b = _mm512_permutexvar_epi8(a, _mm512_multishift_epi64_epi8(a, a));
    _mm512_storeu_si512((void *)dst, _mm512_permutex2var_epi8(a, b, a));
    return (int)_mm512_cmpeq_epi8_mask(a, b);
}
