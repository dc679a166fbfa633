/* ASIMDDP: 8-bit integer dot product accumulating into 32-bit lanes. */
#include <arm_neon.h>

int ccopt_probe_asimddp(const unsigned char *src, unsigned int *dst);
int ccopt_probe_asimddp(const unsigned char *src, unsigned int *dst)
{
    uint8x16_t a = vld1q_u8(src);
    uint32x4_t u = vdotq_u32(vld1q_u32(dst), a, vld1q_u8(src + 16));
    int8x16_t s = vreinterpretq_s8_u8(a);
    int32x4_t v = vdotq_lane_s32(vreinterpretq_s32_u32(u), s, vget_high_s8(s), 1);
    int32x2_t w = vdot_s32(vget_low_s32(v), vget_low_s8(s), vget_high_s8(s));
    vst1q_u32(dst, u);
    return vget_lane_s32(w, 1) + vgetq_lane_s32(v, 0);
}
