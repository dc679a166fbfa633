/* What ccopt_cpu.c and ccopt_cpu_info.c use of the UCRT stdio.h (see README.md). */
#pragma once
#include <stddef.h>
typedef struct _iobuf FILE;
FILE *__acrt_iob_func(unsigned index);
#define stdout (__acrt_iob_func(1))
#define stderr (__acrt_iob_func(2))
int fprintf(FILE *stream, const char *format, ...);
int fputc(int c, FILE *stream);
int fputs(const char *s, FILE *stream);
size_t fwrite(const void *ptr, size_t size, size_t n, FILE *stream);
int printf(const char *format, ...);
int fflush(FILE *stream);
