/* sum.dispatch.c: compiled once per target; a variant compiles only the targets above its level. */
#include <stddef.h>

int CCOPT_FN(sum)(const int *v, size_t n)
{
    int s = 0;
    size_t i;
    for (i = 0; i < n; i++)
        s += v[i];
    return s;
}
