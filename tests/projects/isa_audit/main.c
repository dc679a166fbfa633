/* main.c: the program's own code, compiled with the baseline only unless -Dmistakes=true adds -mavx2
 * (aarch64: +crc), when its checksum takes the faster path that every CPU of the baseline lacks. */
#include <stdio.h>
#include <stdint.h>

#include "k.dispatch.h"
CCOPT_DISPATCH_DECLARE(k_dispatch, int, twice_sum, (const int *v, size_t n))
CCOPT_DISPATCH_DEFINE(k_dispatch, int, twice_sum, (const int *v, size_t n), (v, n))

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif

static unsigned checksum(const int *v, size_t n)
{
    unsigned h = 0;
    size_t i = 0;
#if defined(__AVX2__)
    __m256i acc = _mm256_setzero_si256();
    for (; i + 8 <= n; i += 8)
        acc = _mm256_xor_si256(acc, _mm256_add_epi32(acc, _mm256_loadu_si256((const __m256i *)(v + i))));
    h = (unsigned)_mm256_extract_epi32(acc, 0);
#elif defined(__ARM_FEATURE_CRC32)
    for (; i < n; i++)
        h = __crc32w(h, (uint32_t)v[i]);
#endif
    for (; i < n; i++)
        h = h * 31u + (unsigned)v[i];
    return h;
}

int main(int argc, char **argv)
{
    int v[100];
    int i;
    (void)argv;
    for (i = 0; i < 100; i++)
        v[i] = i + argc - 1;
    printf("sum %d checksum %u (%s)\n", twice_sum(v, 100), checksum(v, 100),
           CCOPT_DISPATCH_TARGET_NAME(k_dispatch, twice_sum));
    return twice_sum(v, 100) == 9900 ? 0 : 1;
}
