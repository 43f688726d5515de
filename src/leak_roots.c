/* leak_roots.c - the roots of a leak check in a stopped process. (Placeholder until the root collection lands.) */
#include <stdlib.h>
#include <string.h>

#include "leak_roots.h"
#include "proc.h"

int
leak_roots_plan(const char *maps, const struct leak_thread_regs *th, size_t nth, const struct leak_block *b,
		size_t n, uint64_t tls_size, int attached, struct leak_roots *out)
{
	(void)maps; (void)th; (void)nth; (void)b; (void)n; (void)tls_size; (void)attached;
	memset(out, 0, sizeof(*out));
	return 0;
}

int
leak_roots_collect(struct jt_tracer *tr, struct jt_proc *p, const struct leak_block *b, size_t n,
		   struct leak_roots *out)
{
	(void)tr; (void)p;
	return leak_roots_plan("", NULL, 0, b, n, 0, 0, out);
}

void
leak_roots_clear(struct leak_roots *r)
{
	free(r->regions);
	free(r->words);
	free(r->vtables);
	memset(r, 0, sizeof(*r));
}
