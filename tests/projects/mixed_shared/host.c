/* host.c: a program using the library, built without ccopt. */
#include <stdio.h>

#include "mixed.h"

int main(void)
{
    int v[100], i;
    float f[100];
    const char *why = mixed_unsupported();
    if (why != NULL) {
        fprintf(stderr, "%s\n", why);
        return 1;
    }
    for (i = 0; i < 100; i++) {
        v[i] = i;
        f[i] = (float)i;
    }
    printf("sum %d, scaled %g\n", mixed_sum(v, 100), mixed_scale_sum(f, 100, 2.0f));
    return mixed_sum(v, 100) == 4950 && mixed_scale_sum(f, 100, 2.0f) == 9900.0f ? 0 : 1;
}
