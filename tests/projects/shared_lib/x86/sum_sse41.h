/* The library's own header for its SSE4.1 file: a generated header of the same name must never shadow it. */
#ifndef SUM_SSE41_H
#define SUM_SSE41_H
#include <stddef.h>
int sum_sse41(const int *v, size_t n);
#endif
