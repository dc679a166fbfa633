/* NEON_FP16: conversions between IEEE half and single precision vectors. */
#include <arm_neon.h>

int ccopt_probe_neon_fp16(const unsigned short *src, float *dst);
int ccopt_probe_neon_fp16(const unsigned short *src, float *dst)
{
    float16x4_t h = vreinterpret_f16_u16(vld1_u16(src));
    float32x4_t f = vcvt_f32_f16(h);
    uint16x4_t back = vreinterpret_u16_f16(vcvt_f16_f32(vaddq_f32(f, f)));
    vst1q_f32(dst, f);
    return (int)vget_lane_u16(back, 2);
}
