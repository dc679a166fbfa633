/* AMX_TILE: tile configuration, loads, stores and zeroing (x86_64 only). */
#include <immintrin.h>
/* gcc's tile intrinsics are inline asm, which builds without the flag: check its macro too
 * (clang's are builtins that check the target, and its macro is spelled __AMXTILE__) */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__AMX_TILE__)
    #error "AMX_TILE is not enabled"
#endif

int ccopt_probe_amx_tile(const void *config, unsigned char *buf);
int ccopt_probe_amx_tile(const void *config, unsigned char *buf)
{
    _tile_loadconfig(config);
    _tile_zero(0);
    _tile_loadd(1, buf, 64);
    _tile_stream_loadd(2, buf, 64);
    _tile_stored(1, buf + 1024, 64);
    _tile_release();
    return buf[0];
}
