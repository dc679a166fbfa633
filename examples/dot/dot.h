#ifndef DOT_H
#define DOT_H
#include <stddef.h>

/* The dispatched dot product: the best version for the running CPU. */
float dot(const float *a, const float *b, size_t n);
/* The name of the target dot() runs ("AVX512_SKX", "X86_V3", ..., "BASELINE"). */
const char *dot_target(void);
#endif
