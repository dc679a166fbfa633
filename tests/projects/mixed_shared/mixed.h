/* mixed.h: the library's API, the only symbols it exports. */
#ifndef MIXED_H
#define MIXED_H
#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(MIXED_BUILD)
#define MIXED_API __declspec(dllexport)
#elif defined(_WIN32)
#define MIXED_API __declspec(dllimport)
#else
#define MIXED_API __attribute__((visibility("default")))
#endif

/* NULL, or the one line saying why this CPU cannot run the library: call it before anything else. */
MIXED_API const char *mixed_unsupported(void);
MIXED_API int mixed_sum(const int *v, int n);
MIXED_API float mixed_scale_sum(const float *v, int n, float k);

#ifdef __cplusplus
}
#endif
#endif
