/* SHA2 (SHA-256): hash update and message schedule instructions. */
#include <arm_neon.h>

int ccopt_probe_sha2(const unsigned int *src, unsigned int *dst);
int ccopt_probe_sha2(const unsigned int *src, unsigned int *dst)
{
    uint32x4_t abcd = vld1q_u32(src), efgh = vld1q_u32(src + 4), msg = vld1q_u32(src + 8);
    uint32x4_t w = vsha256su1q_u32(vsha256su0q_u32(msg, efgh), abcd, efgh);
    uint32x4_t h = vsha256hq_u32(abcd, efgh, w);
    vst1q_u32(dst, vsha256h2q_u32(efgh, abcd, w));
    return (int)vgetq_lane_u32(h, 0);
}
