/* lc_roots.c - the globals (data and bss roots) of leakcases. */
#include "lc.h"

void *volatile lc_global_ptr;
void **volatile lc_parent_ptr;
char *volatile lc_interior_ptr;
char *volatile lc_posparent_ptr;
void *volatile lc_zero_ptr;
char *volatile lc_pastend_ptr;
volatile struct lc_unaligned lc_unaligned_at;
