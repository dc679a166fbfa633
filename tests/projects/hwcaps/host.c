/* A program linked against libhw.so.1: prints what the build the loader picked says about itself. */
#include <stdio.h>
#include <stddef.h>

const char *hw_baseline(void);
const char *hw_pick(void);
void hw_scale(float *out, const float *in, size_t n, float k);

int main(void)
{
    float in[64], out[64];
    size_t i;
    for (i = 0; i < 64; i++)
        in[i] = (float)i;
    hw_scale(out, in, 64, 2.0f);
    printf("baseline: %s\npick: %s\nscale: %s\n", hw_baseline(), hw_pick(), out[63] == 127.0f ? "ok" : "WRONG");
    return 0;
}
