/* ASIMDFHM: FP16 fused multiply-add long into single precision (FMLAL/FMLSL). */
#include <arm_neon.h>

int ccopt_probe_asimdfhm(const unsigned short *src, float *dst);
int ccopt_probe_asimdfhm(const unsigned short *src, float *dst)
{
    float16x8_t a = vreinterpretq_f16_u16(vld1q_u16(src));
    float16x4_t h = vget_low_f16(a);
    float32x4_t q = vfmlalq_high_f16(vfmlalq_low_f16(vld1q_f32(dst), a, a), a, a);
    float32x2_t d = vfmlsl_low_f16(vget_low_f32(q), h, vget_high_f16(a));
    vst1q_f32(dst, q);
    return (int)vget_lane_f32(vfmlal_high_f16(d, h, h), 0);
}
