#ifndef DOT_H
#define DOT_H
#include <stddef.h>
#include <stdint.h>

/* The dispatched dot product: the best version for the running CPU. */
float dot(const float *a, const float *b, size_t n);
/* The name of the target dot() runs ("AVX512_SKX", "X86_V3", ..., "BASELINE"). */
const char *dot_target(void);

/* p(x) = c0 + c1 x + ... + c16 x^16 with ck = 1/k! (exp(x) to float precision on [-1, 1]),
 * coefficients c0 first: the polynomial poly_sum() evaluates. */
#define POLY_DEGREE 16
#define POLY_COEFFS {1.0f, 1.0f, 5.0e-1f, 1.6666667e-1f, 4.1666668e-2f, 8.3333338e-3f, 1.3888889e-3f, \
    1.9841270e-4f, 2.4801587e-5f, 2.7557319e-6f, 2.7557319e-7f, 2.5052108e-8f, 2.0876757e-9f,       \
    1.6059044e-10f, 1.1470746e-11f, 7.6471637e-13f, 4.7794773e-14f}
/* The dispatched sum of p(x[i]) over i < n, by Horner's rule: a compute-bound kernel,
 * the best version for the running CPU. */
float poly_sum(const float *x, size_t n);
/* The name of the target poly_sum() runs. */
const char *poly_target(void);

/* The dispatched dot product of two int8 vectors, summed in int32 (modulo 2^32 past
 * INT32_MAX; n <= 131072 never gets there): an integer compute-bound kernel, the best
 * version for the running CPU.  Input range: b[i] in [-127, 127], a[i] any int8 (the
 * x86 versions multiply |a| by b carrying a's sign, and keep pairs of products in int16). */
int32_t i8dot(const int8_t *a, const int8_t *b, size_t n);
/* The name of the target i8dot() runs. */
const char *i8dot_target(void);
#endif
