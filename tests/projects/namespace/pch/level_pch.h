/* The precompiled header of main.c (b_pch=true): the run-time's public headers. */
#include <stdio.h>
#include <string.h>

#include "ccopt_dispatch.h"
