/* Lets a C++-only build compile the runtime with its C++ compiler. */
#include "ccopt_cpu.c"
