/* gen.c: a tool of the build machine (a cross build's native executable), built for that machine's own CPU:
 * the audit of the host's code leaves it out and says so. */
#include <stdio.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif

int main(void)
{
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8}, sum = 0, i;
#if defined(__AVX2__)
    __m256i x = _mm256_loadu_si256((const __m256i *)v);
    _mm256_storeu_si256((__m256i *)v, _mm256_add_epi32(x, x));
#endif
    for (i = 0; i < 8; i++)
        sum += v[i];
    printf("%d\n", sum);
    return 0;
}
