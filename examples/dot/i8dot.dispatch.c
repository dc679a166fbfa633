/*
 * A compute-bound integer kernel: the dot product of two int8 vectors, summed in
 * int32, compiled once per target listed in meson.build.  Here the instruction set, not only
 * the vector width, makes the difference:
 *   SSE2      no byte multiply: bytes moved to the high half of 16-bit words, then
 *             pmulhw gives their int16 products, pmaddwd widens pairs to int32
 *   SSSE3     pmaddubsw multiplies bytes (unsigned by signed): |a| times b with a's sign
 *   AVX2      the same on 32 bytes
 *   AVX-512BW the same on 64 bytes, the sign applied through a mask
 *   VNNI      vpdpbusd: |a| times signed b, four products added into each int32 lane
 *   ASIMD     smull + sadalp; ASIMDDP sdot, four signed byte products per int32 lane
 *   VSX       vmsummbm (signed by unsigned bytes, four per int32 lane)
 *   VX (z13)  even/odd byte multiplies, then halfword multiply-adds into int32
 * Input range (dot.h): b[i] in [-127, 127], a[i] any int8.  The x86 versions multiply
 * |a| (at most 128) by b carrying a's sign, and -(-128) is not an int8; with |b| <= 127
 * a pmaddubsw pair sum stays within 2 * 128 * 127 = 32512, so its int16 saturation never
 * happens (SSE2's sum of two pmulhw products, likewise).  The Arm, VSX and z versions
 * are exact for any int8.  All versions sum in int32 lanes, modulo 2^32.
 * Its targets are listed in meson.build, so editing this file recompiles only its versions.
 */
#include <stddef.h>
#include <stdint.h>

#include "ccopt_config.h"
#include "ccopt_dispatch.h"
#include "dot.h"

#define I8_SCALAR 0
#define I8_SSE2 1
#define I8_SSSE3 2
#define I8_AVX2 3
#define I8_AVX512BW 4
#define I8_VNNI 5
#define I8_NEON 6
#define I8_ASIMDDP 7
#define I8_VSX 8
#define I8_ZVECTOR 9

#if defined(CCOPT_HAVE_AVX512VNNI) && defined(CCOPT_HAVE_AVX512BW)
#include <immintrin.h>
#define I8_PATH I8_VNNI
#define I8_KERNEL "avx512vnni"
#elif defined(CCOPT_HAVE_AVX512BW)
#include <immintrin.h>
#define I8_PATH I8_AVX512BW
#define I8_KERNEL "avx512bw"
#elif defined(CCOPT_HAVE_AVX2)
#include <immintrin.h>
#define I8_PATH I8_AVX2
#define I8_KERNEL "avx2"
#elif defined(CCOPT_HAVE_SSSE3)
#include <tmmintrin.h>
#define I8_PATH I8_SSSE3
#define I8_KERNEL "ssse3"
#elif defined(CCOPT_HAVE_SSE2)
#include <emmintrin.h>
#define I8_PATH I8_SSE2
#define I8_KERNEL "sse2"
#elif defined(CCOPT_HAVE_ASIMDDP) && defined(__ARM_FEATURE_DOTPROD)
#include <arm_neon.h>
#define I8_PATH I8_ASIMDDP
#define I8_KERNEL "asimddp"
#elif defined(CCOPT_HAVE_ASIMD) || defined(CCOPT_HAVE_NEON)
#include <arm_neon.h>
#define I8_PATH I8_NEON
#define I8_KERNEL "neon"
#elif defined(CCOPT_HAVE_VSX)
#include <altivec.h>
#define I8_PATH I8_VSX
#define I8_KERNEL "vsx"
#elif defined(CCOPT_HAVE_VX)
#include <vecintrin.h>
#define I8_PATH I8_ZVECTOR
#define I8_KERNEL "zvector"
#else
#define I8_PATH I8_SCALAR
#define I8_KERNEL "scalar"
#endif

/* Independent accumulators: four keep the multiply-add chains (vpdpbusd: latency 4-5)
 * out of the way.  The kernel is then bound by loads and by the two vector pipes that
 * multiply; eight measured no faster on Zen 4 and spill on AVX2's 16 registers. */
#define I8_ACCS 4

const char *CCOPT_FN(i8dot_kernel)(void) { return I8_KERNEL; }

/* Each SIMD path defines i8_acc (its accumulator), I8_W (bytes per step) and
 * i8_zero(), i8_step() (acc plus the products of I8_W bytes of a and b), i8_add()
 * and i8_hsum() (the sum of the lanes, modulo 2^32); one loop below runs them all. */
#if I8_PATH >= I8_SSE2 && I8_PATH <= I8_VNNI
static uint32_t i8_hsum128(__m128i v)
{
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1));
    return (uint32_t)_mm_cvtsi128_si32(v);
}
#endif

#if I8_PATH == I8_SSE2 || I8_PATH == I8_SSSE3
typedef __m128i i8_acc;
#define I8_W 16
static i8_acc i8_zero(void) { return _mm_setzero_si128(); }
static i8_acc i8_add(i8_acc x, i8_acc y) { return _mm_add_epi32(x, y); }
static uint32_t i8_hsum(i8_acc v) { return i8_hsum128(v); }
#if I8_PATH == I8_SSE2
/* A byte in the high half of a 16-bit word reads as 256 times its value: the even
 * bytes shifted up, the odd ones masked, pmulhw ((256 x * 256 y) >> 16) gives x * y
 * exactly.  The even and odd products of a pair add within int16 (|sum| <= 32512),
 * and pmaddwd by ones widens pairs of them into the int32 accumulators.  This beats
 * sign-extending both operands by unpacking (cmpgt + 2 punpck each) by 15-20% on Zen 4. */
static i8_acc i8_step(i8_acc acc, const int8_t *a, const int8_t *b)
{
    const __m128i high = _mm_set1_epi16(-256), ones = _mm_set1_epi16(1);
    __m128i va = _mm_loadu_si128((const __m128i *)a), vb = _mm_loadu_si128((const __m128i *)b);
    __m128i even = _mm_mulhi_epi16(_mm_slli_epi16(va, 8), _mm_slli_epi16(vb, 8));
    __m128i odd = _mm_mulhi_epi16(_mm_and_si128(va, high), _mm_and_si128(vb, high));
    return _mm_add_epi32(acc, _mm_madd_epi16(_mm_add_epi16(even, odd), ones));
}
#else
/* pmaddubsw(|a|, b with a's sign): int16 pair sums, then pmaddwd by ones to int32 */
static i8_acc i8_step(i8_acc acc, const int8_t *a, const int8_t *b)
{
    __m128i va = _mm_loadu_si128((const __m128i *)a), vb = _mm_loadu_si128((const __m128i *)b);
    __m128i pairs = _mm_maddubs_epi16(_mm_abs_epi8(va), _mm_sign_epi8(vb, va));
    return _mm_add_epi32(acc, _mm_madd_epi16(pairs, _mm_set1_epi16(1)));
}
#endif
#elif I8_PATH == I8_AVX2
typedef __m256i i8_acc;
#define I8_W 32
static i8_acc i8_zero(void) { return _mm256_setzero_si256(); }
static i8_acc i8_add(i8_acc x, i8_acc y) { return _mm256_add_epi32(x, y); }
static uint32_t i8_hsum(i8_acc v)
{
    return i8_hsum128(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
/* As SSSE3, but b takes a's sign by xor/subtract with a's sign mask instead of vpsignb:
 * vpabsb, vpsignb, vpmaddubsw and vpmaddwd share the two multiply pipes of Zen 4,
 * compare/xor/subtract run on all four. */
static i8_acc i8_step(i8_acc acc, const int8_t *a, const int8_t *b)
{
    __m256i va = _mm256_loadu_si256((const __m256i *)a), vb = _mm256_loadu_si256((const __m256i *)b);
    __m256i negative = _mm256_cmpgt_epi8(_mm256_setzero_si256(), va);
    __m256i b_signed = _mm256_sub_epi8(_mm256_xor_si256(vb, negative), negative);
    __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(va), b_signed);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
}
#elif I8_PATH == I8_AVX512BW || I8_PATH == I8_VNNI
typedef __m512i i8_acc;
#define I8_W 64
static i8_acc i8_zero(void) { return _mm512_setzero_si512(); }
static i8_acc i8_add(i8_acc x, i8_acc y) { return _mm512_add_epi32(x, y); }
static uint32_t i8_hsum(i8_acc v)
{
    __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    return i8_hsum128(_mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
}
/* AVX-512 has no vpsignb: b is negated where a < 0 under a mask */
static i8_acc i8_step(i8_acc acc, const int8_t *a, const int8_t *b)
{
    __m512i va = _mm512_loadu_si512(a), vb = _mm512_loadu_si512(b);
    __m512i b_signed = _mm512_mask_sub_epi8(vb, _mm512_movepi8_mask(va), _mm512_setzero_si512(), vb);
#if I8_PATH == I8_VNNI
    return _mm512_dpbusd_epi32(acc, _mm512_abs_epi8(va), b_signed);
#else
    __m512i pairs = _mm512_maddubs_epi16(_mm512_abs_epi8(va), b_signed);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)));
#endif
}
#elif I8_PATH == I8_ASIMDDP || I8_PATH == I8_NEON
typedef int32x4_t i8_acc;
#define I8_W 16
static i8_acc i8_zero(void) { return vdupq_n_s32(0); }
static i8_acc i8_add(i8_acc x, i8_acc y) { return vaddq_s32(x, y); }
static uint32_t i8_hsum(i8_acc v)
{
    return ((uint32_t)vgetq_lane_s32(v, 0) + (uint32_t)vgetq_lane_s32(v, 1)) +
           ((uint32_t)vgetq_lane_s32(v, 2) + (uint32_t)vgetq_lane_s32(v, 3));
}
static i8_acc i8_step(i8_acc acc, const int8_t *a, const int8_t *b)
{
    int8x16_t va = vld1q_s8(a), vb = vld1q_s8(b);
#if I8_PATH == I8_ASIMDDP
    return vdotq_s32(acc, va, vb);
#else
    /* smull to int16 (a product of two int8 always fits), then pairwise add-accumulate */
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(va), vget_low_s8(vb)));
    return vpadalq_s16(acc, vmull_s8(vget_high_s8(va), vget_high_s8(vb)));
#endif
}
#elif I8_PATH == I8_VSX
/* vmsummbm multiplies signed by unsigned bytes: with u = a + 128 (a ^ 0x80),
 * sum(u * b) - 128 * sum(b) = sum(a * b), exact for any int8; a second vmsummbm
 * (b times ones) sums b for the correction. */
typedef struct {
    __vector signed int prod, bsum;
} i8_acc;
#define I8_W 16
static i8_acc i8_zero(void)
{
    i8_acc z;
    z.prod = z.bsum = vec_splats(0);
    return z;
}
static i8_acc i8_add(i8_acc x, i8_acc y)
{
    x.prod = vec_add(x.prod, y.prod);
    x.bsum = vec_add(x.bsum, y.bsum);
    return x;
}
static uint32_t i8_hsum(i8_acc v)
{
    uint32_t s = 0;
    int k;
    for (k = 0; k < 4; k++) s += (uint32_t)v.prod[k] - ((uint32_t)v.bsum[k] << 7);
    return s;
}
static i8_acc i8_step(i8_acc acc, const int8_t *a, const int8_t *b)
{
    __vector signed char vb = vec_xl(0, b);
    __vector unsigned char ua = (__vector unsigned char)vec_xor(vec_xl(0, a), vec_splats((signed char)-128));
    acc.prod = vec_msum(vb, ua, acc.prod);
    acc.bsum = vec_msum(vb, vec_splats((unsigned char)1), acc.bsum);
    return acc;
}
#elif I8_PATH == I8_ZVECTOR
typedef __vector signed int i8_acc;
#define I8_W 16
static i8_acc i8_zero(void) { return vec_splats(0); }
static i8_acc i8_add(i8_acc x, i8_acc y) { return x + y; }
static uint32_t i8_hsum(i8_acc v)
{
    return ((uint32_t)v[0] + (uint32_t)v[1]) + ((uint32_t)v[2] + (uint32_t)v[3]);
}
/* even and odd byte products (int16, exact), then halfword multiply-adds by one
 * widen them into the int32 accumulator */
static i8_acc i8_step(i8_acc acc, const int8_t *a, const int8_t *b)
{
    const __vector signed short one = vec_splats((signed short)1);
    __vector signed char va = vec_xl(0, a), vb = vec_xl(0, b);
    __vector signed short even = vec_mule(va, vb), odd = vec_mulo(va, vb);
    acc = vec_moadd(even, one, vec_meadd(even, one, acc));
    return vec_moadd(odd, one, vec_meadd(odd, one, acc));
}
#endif

int32_t CCOPT_FN(i8dot)(const int8_t *a, const int8_t *b, size_t n)
{
    size_t i = 0;
    uint32_t sum = 0; /* unsigned: wraps modulo 2^32 like the vector lanes */
#if I8_PATH != I8_SCALAR
    i8_acc acc[I8_ACCS];
    int k;
    for (k = 0; k < I8_ACCS; k++) acc[k] = i8_zero();
    for (; i + I8_W * I8_ACCS <= n; i += I8_W * I8_ACCS)
        for (k = 0; k < I8_ACCS; k++) acc[k] = i8_step(acc[k], a + i + I8_W * k, b + i + I8_W * k);
    for (; i + I8_W <= n; i += I8_W) acc[0] = i8_step(acc[0], a + i, b + i);
    for (k = 1; k < I8_ACCS; k++) acc[0] = i8_add(acc[0], acc[k]);
    sum = i8_hsum(acc[0]);
#else
    {
        /* portable C: four partial sums, which is what a build without SIMD runs */
        uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (; i + 4 <= n; i += 4) {
            s0 += (uint32_t)(a[i] * b[i]);
            s1 += (uint32_t)(a[i + 1] * b[i + 1]);
            s2 += (uint32_t)(a[i + 2] * b[i + 2]);
            s3 += (uint32_t)(a[i + 3] * b[i + 3]);
        }
        sum = (s0 + s1) + (s2 + s3);
    }
#endif
    for (; i < n; i++)
        sum += (uint32_t)(a[i] * b[i]);
    return (int32_t)sum;
}
