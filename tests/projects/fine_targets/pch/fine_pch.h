/* The precompiled header of main.c (b_pch=true): the C library's and the run-time's public headers. */
#include <stdio.h>

#include "ccopt_dispatch.h"
