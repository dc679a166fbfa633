/* SHA: the SHA-1 and SHA-256 round and message-schedule instructions (SHA-NI). */
#include <immintrin.h>

int ccopt_probe_sha(const unsigned int *src, unsigned int *dst);
int ccopt_probe_sha(const unsigned int *src, unsigned int *dst)
{
    __m128i state = _mm_loadu_si128((const __m128i *)(const void *)src);
    __m128i msg = _mm_loadu_si128((const __m128i *)(const void *)(src + 4));
    __m128i s256 = _mm_sha256rnds2_epu32(state, msg, _mm_sha256msg1_epu32(msg, state));
    __m128i s1 = _mm_sha1rnds4_epu32(state, _mm_sha1nexte_epu32(msg, state), 3);
    s256 = _mm_sha256msg2_epu32(s256, _mm_sha1msg2_epu32(s1, _mm_sha1msg1_epu32(msg, s1)));
    _mm_storeu_si128((__m128i *)(void *)dst, s256);
    return _mm_cvtsi128_si32(s1);
}
