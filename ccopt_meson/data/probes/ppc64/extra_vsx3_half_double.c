/* VSX3_HALF_DOUBLE: POWER9 scalar half<->double conversions (xscvdphp/xscvhpdp) via inline asm. */
#ifndef _ARCH_PWR9
    #error "POWER9 (ISA 3.0) is not enabled"
#endif

int ccopt_probe_extra_vsx3_half_double(double *src, int n);
int ccopt_probe_extra_vsx3_half_double(double *src, int n)
{
    double d = src[0] * n;
    double h, r;
    __asm__ ("xscvdphp %x0,%x1" : "=wa" (h) : "wa" (d));
    __asm__ ("xscvhpdp %x0,%x1" : "=wa" (r) : "wa" (h));
    src[1] = r;
    return (int)r;
}
