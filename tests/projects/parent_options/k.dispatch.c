int CCOPT_FN(k_version)(void);
int CCOPT_FN(k_version)(void)
{
    return 1;
}
