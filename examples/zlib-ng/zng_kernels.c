/*
 * Prints which kernel each slot of zlib-ng's function table holds on this CPU, one
 * "slot kernel" line each, e.g. "adler32 adler32_avx512_vnni".  The tests compare these lines
 * with what ccopt's run-time checks (and CCOPT_DISABLE_CPU_FEATURES) must lead to.
 */
#include <stdio.h>

#include "zbuild.h"
#include "functable.h"
#include "arch_functions.h"

typedef void (*any_fn)(void);
struct kernel { any_fn fn; const char *name; };
#define K(F) { (any_fn)(F), #F },

/* Every function zlib-ng's functable.c can pick, under the same conditions it uses. */
static const struct kernel kernels[] = {
    K(adler32_c) K(adler32_fold_copy_c) K(crc32_braid) K(crc32_fold_c) K(crc32_fold_copy_c)
#ifndef WITHOUT_CHORBA
    K(crc32_chorba)
#endif
#if defined(WITH_ALL_FALLBACKS) || !defined(HAVE_BUILTIN_CTZ)
    K(longest_match_c) K(compare256_c)
#endif
#ifdef WITH_ALL_FALLBACKS
    K(chunkmemset_safe_c) K(inflate_fast_c) K(slide_hash_c)
#endif
#ifdef X86_SSE2
    K(chunkmemset_safe_sse2) K(inflate_fast_sse2) K(slide_hash_sse2) K(compare256_sse2) K(longest_match_sse2)
#  ifndef WITHOUT_CHORBA_SSE
    K(crc32_chorba_sse2)
#  endif
#endif
#ifdef X86_SSSE3
    K(adler32_ssse3) K(chunkmemset_safe_ssse3) K(inflate_fast_ssse3)
#endif
#if defined(X86_SSE41) && !defined(WITHOUT_CHORBA_SSE)
    K(crc32_chorba_sse41)
#endif
#ifdef X86_SSE42
    K(adler32_fold_copy_sse42)
#endif
#ifdef X86_PCLMULQDQ_CRC
    K(crc32_pclmulqdq) K(crc32_fold_pclmulqdq) K(crc32_fold_pclmulqdq_copy)
#endif
#ifdef X86_AVX2
    K(adler32_avx2) K(adler32_fold_copy_avx2) K(chunkmemset_safe_avx2) K(inflate_fast_avx2) K(slide_hash_avx2)
    K(compare256_avx2) K(longest_match_avx2)
#endif
#ifdef X86_AVX512
    K(adler32_avx512) K(adler32_fold_copy_avx512) K(chunkmemset_safe_avx512) K(inflate_fast_avx512)
    K(compare256_avx512) K(longest_match_avx512)
#endif
#ifdef X86_AVX512VNNI
    K(adler32_avx512_vnni) K(adler32_fold_copy_avx512_vnni)
#endif
#ifdef X86_VPCLMULQDQ_CRC
    K(crc32_vpclmulqdq) K(crc32_fold_vpclmulqdq) K(crc32_fold_vpclmulqdq_copy)
#endif
#ifdef ARM_NEON
    K(adler32_neon) K(adler32_fold_copy_neon) K(chunkmemset_safe_neon) K(inflate_fast_neon) K(slide_hash_neon)
    K(compare256_neon) K(longest_match_neon)
#endif
#ifdef ARM_CRC32
    K(crc32_armv8) K(crc32_fold_armv8) K(crc32_fold_copy_armv8)
#endif
};

static void show(const char *slot, any_fn fn)
{
    size_t i;
    for (i = 0; i < sizeof kernels / sizeof kernels[0]; ++i)
        if (kernels[i].fn == fn) {
            printf("%s %s\n", slot, kernels[i].name);
            return;
        }
    printf("%s unknown\n", slot);
}

#define SHOW(SLOT) show(#SLOT, (any_fn)functable.SLOT)

int main(void)
{
    if (functable.force_init() != 0)
        return 1;
    SHOW(adler32); SHOW(adler32_fold_copy); SHOW(chunkmemset_safe); SHOW(compare256); SHOW(crc32);
    SHOW(crc32_fold); SHOW(crc32_fold_copy); SHOW(inflate_fast); SHOW(longest_match); SHOW(slide_hash);
    return 0;
}
