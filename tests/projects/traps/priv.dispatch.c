/* A kernel of a shared library, reached only through the library's own entry point */
int CCOPT_FN(priv_sum)(const int *v, int n)
{
    int s = 0, i;
    for (i = 0; i < n; i++)
        s += v[i];
    return s;
}
