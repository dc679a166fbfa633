// scale.dispatch.cpp: a C++ kernel, compiled once per target as scale_sum_<TARGET>, with C linkage.
#include <numeric>

extern "C" float CCOPT_FN(scale_sum)(const float *v, int n, float k)
{
    return k * std::accumulate(v, v + n, 0.0f);
}
