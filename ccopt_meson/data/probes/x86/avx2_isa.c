/* AVX2_ISA: 256-bit integer AVX2 alone (no F16C, no FMA). */
#include <immintrin.h>

int ccopt_probe_avx2_isa(const int *src, int *dst);
int ccopt_probe_avx2_isa(const int *src, int *dst)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)src);
    __m256i idx = _mm256_and_si256(a, _mm256_set1_epi32(7));
    __m256i b = _mm256_shuffle_epi8(_mm256_add_epi32(a, a), _mm256_permutevar8x32_epi32(a, idx));
    __m256i g = _mm256_i32gather_epi32(src, idx, 4);
    _mm256_storeu_si256((__m256i *)(void *)dst, _mm256_sllv_epi32(b, g));
    return _mm256_movemask_epi8(_mm256_cmpeq_epi8(a, b));
}
