/* Which build type compiled this library. */
#ifdef NDEBUG
const char *build_types_flavour(void) { return "optimized"; }
#else
const char *build_types_flavour(void) { return "debug"; }
#endif
