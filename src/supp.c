/* supp.c - suppressions: stacks left out of the live section (LeakSanitizer's leak:PATTERN lines, and built-in ones). */
#include <stdlib.h>

#include "supp.h"
#include "util.h"

/* STUB: replaced by the suppressions work. */
struct jt_supp {
	int unused;
};

struct jt_supp *
supp_load(const char *path, int no_defaults)
{
	(void)path;
	(void)no_defaults;
	return xcalloc(1, sizeof(struct jt_supp));
}

void
supp_free(struct jt_supp *sp)
{
	free(sp);
}

const char *
supp_match(const struct jt_supp *sp, struct jt_sym *sym, const struct jt_stack *st)
{
	(void)sp;
	(void)sym;
	(void)st;
	return NULL;
}
