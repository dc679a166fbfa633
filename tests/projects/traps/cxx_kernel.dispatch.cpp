/* A C++ kernel its C callers reach: its versions get C linkage (extern "C" on each definition). */
#include <numeric>

extern "C" int CCOPT_FN(sum_cxx)(const int *v, int n)
{
    return std::accumulate(v, v + n, 0);
}

extern "C" const char *CCOPT_FN(sum_cxx_name)(void)
{
    return CCOPT_TARGET_NAME;
}
