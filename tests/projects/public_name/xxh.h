/* xxh.h: the library's public API; its names are the library's, not the kernel's. */
#ifndef XXH_H
#define XXH_H
#include <stddef.h>
#include <stdint.h>

uint64_t xxh3_update(uint64_t acc, const uint32_t *data, size_t n);
const char *xxh3_update_target(void);
#endif
