/* ADX: add with carry (ADCX) and add with overflow (ADOX), for multi-precision arithmetic. */
#include <immintrin.h>
/* clang compiles _addcarryx_u32 without -madx (as ADC): check the macro too */
#if defined(__GNUC__) && !defined(__ADX__)
    #error "ADX is not enabled"
#endif

int ccopt_probe_adx(const unsigned int *a, unsigned int *sum);
int ccopt_probe_adx(const unsigned int *a, unsigned int *sum)
{
    unsigned char c = _addcarryx_u32(0, a[0], a[1], &sum[0]);
    return _addcarryx_u32(c, a[2], a[3], &sum[1]);
}
