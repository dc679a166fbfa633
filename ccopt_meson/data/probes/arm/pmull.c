/* PMULL: 64x64 -> 128-bit polynomial multiply (CRC folding, GHASH). */
#include <arm_neon.h>

int ccopt_probe_pmull(const uint64_t *src, uint64_t *dst);
int ccopt_probe_pmull(const uint64_t *src, uint64_t *dst)
{
    poly64x2_t a = vreinterpretq_p64_u64(vld1q_u64(src));
    poly128_t lo = vmull_p64(vgetq_lane_p64(a, 0), (poly64_t)src[3]);
    poly128_t hi = vmull_high_p64(a, a);
    uint64x2_t x = veorq_u64(vreinterpretq_u64_p128(lo), vreinterpretq_u64_p128(hi));
    vst1q_u64(dst, x);
    return (int)vgetq_lane_u64(x, 1);
}
