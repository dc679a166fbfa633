/* sum.dispatch.c: a C kernel, compiled once per target as sum_<TARGET>. */
int CCOPT_FN(sum)(const int *v, int n)
{
    int s = 0, i;
    for (i = 0; i < n; i++)
        s += v[i];
    return s;
}
