/*@targets baseline sse42 avx2 */
/* no #include: every version is compiled with ccopt_config.h and ccopt_dispatch.h first */
const char *CCOPT_FN(stated)(void)
{
#ifdef CCOPT_HAVE_SSE2
    volatile __m128i zero = _mm_setzero_si128(); /* an intrinsic type without including its header */
    (void)zero;
#endif
    return CCOPT_TARGET_NAME;
}
