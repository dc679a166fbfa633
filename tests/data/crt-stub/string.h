#pragma once
#include <stddef.h>
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
size_t strcspn(const char *s, const char *reject);
size_t strspn(const char *s, const char *accept);
char *strchr(const char *s, int c);
void *memset(void *p, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
char *strcpy(char *d, const char *s);
char *strcat(char *d, const char *s);
char *strpbrk(const char *s, const char *accept);
char *strrchr(const char *s, int c);
int _stricmp(const char *a, const char *b); /* the UCRT's; ccopt_cpu_info.c's --run-as check on Windows */
