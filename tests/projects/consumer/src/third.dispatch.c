const char *CCOPT_FN(third)(void) { return CCOPT_TARGET_NAME; }
