#include "ccopt_config.h"
int main(void) { return CCOPT_WITH_CPU_BASELINE_N > 0 ? 0 : 1; }
