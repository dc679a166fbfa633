/* accumulate.dispatch.c: the kernel, compiled once per target as accumulate_<TARGET>. */
#include <stddef.h>
#include <stdint.h>

uint64_t CCOPT_FN(accumulate)(uint64_t acc, const uint32_t *data, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        acc = acc * 31u + data[i];
    return acc;
}
