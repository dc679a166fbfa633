/* PPC_CRYPTO (POWER8 vector crypto): AES rounds, polynomial multiply-sum, SHA-2 sigma. */
#ifndef __CRYPTO__
    #error "the POWER8 vector crypto facility is not enabled"
#endif
#include <altivec.h>

int ccopt_probe_ppc_crypto(unsigned long long *src, int n);
int ccopt_probe_ppc_crypto(unsigned long long *src, int n)
{
    __vector unsigned long long a = vec_xl(0, src), k = vec_xl(16, src);
    __vector unsigned long long e = __builtin_crypto_vcipherlast(__builtin_crypto_vcipher(a, k), k);
    __vector unsigned long long m = __builtin_crypto_vpmsumd(a, e);
    __vector unsigned int s = __builtin_crypto_vshasigmaw(vec_splats((unsigned int)n), 0, 0xf);
    vec_xst(vec_xor(m, __builtin_crypto_vncipher(e, k)), 0, src);
    return (int)vec_extract(s, 1) + (int)vec_extract(m, 0);
}
