#pragma once
#include <stddef.h>
void *_aligned_malloc(size_t size, size_t alignment);
void _aligned_free(void *p);
