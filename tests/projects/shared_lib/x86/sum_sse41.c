/* A file of the library's own per-ISA layout, compiled for SSE4.1 only ('$noheader sse41'). */
#include <smmintrin.h>

#include "sum_sse41.h"

int sum_sse41(const int *v, size_t n)
{
    __m128i acc = _mm_setzero_si128();
    size_t i = 0;
    int s;
    for (; i + 4 <= n; i += 4)
        acc = _mm_add_epi32(acc, _mm_loadu_si128((const __m128i *)(v + i)));
    s = _mm_extract_epi32(acc, 0) + _mm_extract_epi32(acc, 1) + _mm_extract_epi32(acc, 2) + _mm_extract_epi32(acc, 3);
    for (; i < n; i++)
        s += v[i];
    return s;
}
