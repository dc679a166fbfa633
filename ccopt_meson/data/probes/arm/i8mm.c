/* I8MM: 8-bit integer matrix multiply-accumulate and mixed-sign dot products. */
#include <arm_neon.h>

int ccopt_probe_i8mm(const signed char *src, int *dst);
int ccopt_probe_i8mm(const signed char *src, int *dst)
{
    int8x16_t a = vld1q_s8(src), b = vld1q_s8(src + 16);
    uint8x16_t u = vreinterpretq_u8_s8(b);
    int32x4_t acc = vmmlaq_s32(vld1q_s32(dst), a, b);
    uint32x4_t uacc = vmmlaq_u32(vreinterpretq_u32_s32(acc), u, u);
    acc = vusdotq_s32(vreinterpretq_s32_u32(uacc), u, a);
    acc = vusmmlaq_s32(acc, u, a);
    vst1q_s32(dst, acc);
    return vgetq_lane_s32(acc, 3);
}
