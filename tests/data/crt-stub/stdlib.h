#pragma once
#include <stddef.h>
char *getenv(const char *name);
#if defined(_MSC_VER)
__declspec(noreturn) void abort(void);
#else
__attribute__((noreturn)) void abort(void);
#endif
void *malloc(size_t size);
void free(void *p);
int _putenv_s(const char *name, const char *value);
