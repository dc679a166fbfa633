/* its targets are listed in meson.build */
const char *CCOPT_FN(listed)(void) { return CCOPT_TARGET_NAME; }
