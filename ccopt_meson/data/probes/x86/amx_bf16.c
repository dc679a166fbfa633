/* AMX_BF16: tile dot products of bfloat16 pairs into float sums. */
#include <immintrin.h>
/* gcc's tile intrinsics are inline asm, which builds without the flag: check its macro too
 * (clang's are builtins that check the target, and its macro is spelled __AMXTILE__) */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__AMX_BF16__)
    #error "AMX_BF16 is not enabled"
#endif

int ccopt_probe_amx_bf16(const void *config, unsigned char *buf);
int ccopt_probe_amx_bf16(const void *config, unsigned char *buf)
{
    _tile_loadconfig(config);
    _tile_loadd(1, buf, 64);
    _tile_loadd(2, buf + 1024, 64);
    _tile_zero(0);
    _tile_dpbf16ps(0, 1, 2);
    _tile_stored(0, buf + 2048, 64);
    _tile_release();
    return buf[2048];
}
