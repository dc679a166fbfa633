/* BF16: bfloat16 dot products, matrix multiply-accumulate and float conversion. */
#include <arm_neon.h>

int ccopt_probe_bf16(const float *src, float *dst);
int ccopt_probe_bf16(const float *src, float *dst)
{
    float32x4_t a = vld1q_f32(src), b = vld1q_f32(src + 4);
    bfloat16x8_t h = vcvtq_high_bf16_f32(vcvtq_low_bf16_f32(a), b);
    float32x4_t d = vbfdotq_f32(a, h, h);
    d = vbfmmlaq_f32(d, h, h);
    d = vbfmlalbq_f32(d, h, h);
    vst1q_f32(dst, d);
    return (int)vgetq_lane_f32(d, 0);
}
