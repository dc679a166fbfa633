/* main.c: a user of the library's API only. */
#include <stdio.h>

#include "xxh.h"

int main(void)
{
    uint32_t data[100];
    uint64_t want = 7, got;
    int i;
    for (i = 0; i < 100; i++) {
        data[i] = (uint32_t)i;
        want = want * 31u + (uint32_t)i;
    }
    got = xxh3_update(7, data, 100);
    printf("xxh3_update: %s (%s)\n", got == want ? "ok" : "WRONG", xxh3_update_target());
    return got == want ? 0 : 1;
}
