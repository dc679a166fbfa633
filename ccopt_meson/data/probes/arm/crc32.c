/* CRC32: the CRC-32 and CRC-32C instructions (ACLE __crc32*). */
#include <arm_acle.h>

unsigned int ccopt_probe_crc32(const unsigned char *src, unsigned int crc);
unsigned int ccopt_probe_crc32(const unsigned char *src, unsigned int crc)
{
    crc = __crc32b(crc, src[0]);
    crc = __crc32ch(crc, (unsigned short)(src[1] | src[2] << 8));
    crc = __crc32w(crc, (unsigned int)src[3] * 0x01010101u);
    return __crc32cd(crc, (unsigned long long)crc << 7);
}
