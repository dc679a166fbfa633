/* AVX512CD: conflict detection and per-lane leading-zero count. */
#include <immintrin.h>

int ccopt_probe_avx512cd(const int *src, int *dst);
int ccopt_probe_avx512cd(const int *src, int *dst)
{
    __m512i a = _mm512_loadu_si512((const void *)src);
    __m512i c = _mm512_conflict_epi32(a);
    __m512i z = _mm512_lzcnt_epi64(_mm512_conflict_epi64(c));
    _mm512_storeu_si512((void *)dst, _mm512_lzcnt_epi32(_mm512_add_epi32(c, z)));
    return _mm_cvtsi128_si32(_mm512_castsi512_si128(_mm512_broadcastmw_epi32(0x5a5a)));
}
