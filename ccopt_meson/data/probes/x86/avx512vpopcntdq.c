/* AVX512VPOPCNTDQ: population count of 32- and 64-bit lanes. */
#include <immintrin.h>

int ccopt_probe_avx512vpopcntdq(const long long *src, long long *dst);
int ccopt_probe_avx512vpopcntdq(const long long *src, long long *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i c = _mm512_add_epi64(_mm512_popcnt_epi64(a), _mm512_popcnt_epi32(a));
    _mm512_storeu_si512((void *)dst, c);
    return (int)_mm512_reduce_add_epi64(c);
}
