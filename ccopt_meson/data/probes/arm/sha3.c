/* SHA3: three-way XOR, rotate-and-XOR, XOR-and-rotate and bit-clear-and-XOR (Keccak). */
#include <arm_neon.h>

int ccopt_probe_sha3(const uint64_t *src, uint64_t *dst);
int ccopt_probe_sha3(const uint64_t *src, uint64_t *dst)
{
    uint64x2_t a = vld1q_u64(src), b = vld1q_u64(src + 2), c = vld1q_u64(src + 4);
    uint64x2_t x = veor3q_u64(a, b, c);
    uint64x2_t r = vxarq_u64(vrax1q_u64(x, a), b, 7);
    vst1q_u64(dst, vbcaxq_u64(r, a, c));
    return (int)vgetq_lane_u64(r, 0);
}
