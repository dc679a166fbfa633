/* A C kernel */
int CCOPT_FN(sum_c)(const int *v, int n)
{
    int s = 0, i;
    for (i = 0; i < n; i++)
        s += v[i];
    return s;
}
