/* A third-party header, as shipped */
int ksw_extz2_sse(int x);
