/* lib.c: the library's API (the only exported symbols) and its baseline code. */
#include <stddef.h>
#include <stdint.h>

#include "k.dispatch.h"
#ifdef SEED_inline_copy
int shared_mix(const int *v, int n); /* the dispatch source's inline copies: the linker keeps one */
#endif
#if defined(__AVX2__) || (defined(SEED_target_attr) && defined(__x86_64__))
#include <immintrin.h>
#elif defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif

#define API __attribute__((visibility("default")))

CCOPT_DISPATCH_DECLARE(k_dispatch, int, twice_sum, (const int *v, size_t n))
static CCOPT_DISPATCH_DEFINE(k_dispatch, int, twice_sum, (const int *v, size_t n), (v, n))

/* Baseline code: the faster path is taken only when the compiler was told every CPU has it. */
__attribute__((noinline)) static unsigned checksum(const int *v, size_t n)
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

#ifdef SEED_toplevel_asm
/* A function in file-scope assembly, typed but without .size: the audit must decode it all the same. */
#if defined(__x86_64__)
__asm__(".text\n.globl seed_asm\n.hidden seed_asm\n.type seed_asm,@function\nseed_asm:\n"
        "vpxor %ymm0, %ymm0, %ymm0\nvzeroupper\nxorl %eax, %eax\nret\n");
#elif defined(__aarch64__)
__asm__(".text\n.globl seed_asm\n.hidden seed_asm\n.type seed_asm,%function\nseed_asm:\n"
        ".arch armv8-a+crc\ncrc32w w0, w0, w0\nret\n");
#endif
int seed_asm(void);
#define SEEDED() seed_asm()
#elif defined(SEED_s_label)
int seed_label(void); /* label_*.S: a label without .type or .size */
#define SEEDED() seed_label()
#elif defined(SEED_target_attr)
#if defined(__x86_64__)
__attribute__((target("avx2"), noinline)) static int seed_target(const int *v)
{
    __m256i x = _mm256_loadu_si256((const __m256i *)v);
    return _mm256_extract_epi32(_mm256_add_epi32(x, x), 1);
}
#else
__attribute__((target("+crc"), noinline)) static int seed_target(const int *v)
{
    return (int)__builtin_aarch64_crc32w((unsigned)v[0], (unsigned)v[1]);
}
#endif
#define SEEDED() seed_target(v)
#elif defined(SEED_xsave) && defined(__x86_64__)
__attribute__((noinline)) static int seed_xsave(void)
{
    static char area[4096] __attribute__((aligned(64)));
    __asm__ volatile("xsave %0" : "+m"(area) : "a"(3), "d"(0));
    return area[0];
}
#define SEEDED() seed_xsave()
#elif defined(SEED_inline_copy)
#define SEEDED() shared_mix(v, 8)
#else
#define SEEDED() 0
#endif

API int faults_sum(const int *v, size_t n, int seeded)
{
    return twice_sum(v, n) + (checksum(v, n) == 12345u) + (seeded ? SEEDED() : 0);
}
