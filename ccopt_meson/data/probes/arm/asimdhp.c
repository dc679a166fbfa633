/* ASIMDHP: half-precision (FP16) vector arithmetic. */
#include <arm_neon.h>

int ccopt_probe_asimdhp(const unsigned short *src, unsigned short *dst);
int ccopt_probe_asimdhp(const unsigned short *src, unsigned short *dst)
{
    float16x8_t a = vreinterpretq_f16_u16(vld1q_u16(src));
    float16x8_t b = vabdq_f16(a, vreinterpretq_f16_u16(vld1q_u16(src + 8)));
    float16x8_t c = vfmaq_f16(vmulq_f16(a, b), b, vmaxnmq_f16(a, b));
    uint16x8_t m = vcgtq_f16(c, a);
    vst1q_u16(dst, vreinterpretq_u16_f16(vaddq_f16(c, vrndnq_f16(b))));
    return (int)vgetq_lane_u16(m, 3);
}
