/* AVX512VL: AVX-512 masking, ternary logic and rotates on 128- and 256-bit vectors. */
#include <immintrin.h>

int ccopt_probe_avx512vl(const int *src, int *dst);
int ccopt_probe_avx512vl(const int *src, int *dst)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)src);
    __mmask8 m = _mm256_cmpgt_epi32_mask(a, _mm256_setzero_si256());
    __m256i b = _mm256_mask_add_epi32(a, m, a, _mm256_rol_epi32(a, 7));
    __m128i c = _mm_ternarylogic_epi32(_mm256_castsi256_si128(b), _mm256_castsi256_si128(a),
                                       _mm256_extracti32x4_epi32(b, 1), 0x96);
    _mm256_mask_storeu_epi32(dst, m, b);
    return _mm_cvtsi128_si32(c) + (int)m;
}
