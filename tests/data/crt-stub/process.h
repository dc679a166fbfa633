#pragma once
#include <stddef.h>
#define _P_WAIT 0
long long _spawnvp(int mode, const char *file, const char *const *argv);
