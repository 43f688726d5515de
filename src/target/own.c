/* own.c - recognises the frees glibc makes of its own accord (thread and process teardown) by their stack. */
#include <string.h>

#include "modules.h"
#include "own.h"
#include "sym.h"
#include "unwind.h"
#include "util.h"

/*
 * The functions of glibc's teardown that free. __libc_thread_freeres ends
 * with a tail call to __malloc_arena_thread_freeres (into which
 * tcache_thread_shutdown is inlined), so a tcache free has the latter on its
 * stack and not the former; the others free through helpers it calls.
 */
static const char *const own_names[] = {
	"__libc_thread_freeres", "__malloc_arena_thread_freeres", "tcache_thread_shutdown",
	"arena_thread_freeres", "__libc_freeres",
};

static void
own_add(struct jt_own_range *v, unsigned *n, uint64_t lo, uint64_t hi)
{
	for (unsigned i = 0; i < *n; i++)
		if (v[i].lo == lo && v[i].hi == hi)
			return;
	if (*n == OWN_MAX_RANGES)
		return;
	v[*n].lo = lo;
	v[*n].hi = hi;
	(*n)++;
}

void
own_scan_module(struct jt_own *o, struct jt_sym *sym, const struct jt_module *m)
{
	uint64_t lo, hi;

	for (size_t i = 0; i < ARRAY_SIZE(own_names); i++)
		if (sym_lookup_range(sym, m->path, own_names[i], &lo, &hi) == 0)
			own_add(o->fn, &o->nfn, lo, hi);
	/* Only glibc's libc.so defines __libc_freeres (valgrind calls it); a static program is not it. */
	if (!m->is_main && sym_lookup(sym, m->path, "__libc_freeres", &lo) == 0)
		own_add(o->lib, &o->nlib, m->start, m->end);
}

static int
own_in(const struct jt_own_range *v, unsigned n, uint64_t pc)
{
	for (unsigned i = 0; i < n; i++)
		if (pc >= v[i].lo && pc < v[i].hi)
			return 1;
	return 0;
}

int
own_free_is_libc(const struct jt_own *o, const uint64_t *pcs, int n, int complete)
{
	int all_lib = complete && n >= 2 && o->nlib;

	/* A return address is looked up at pc - 1, inside its call instruction. */
	for (int i = 1; i < n; i++) {
		uint64_t pc = unwind_pc_addr(pcs[i]) - 1;

		if (own_in(o->fn, o->nfn, pc))
			return 1;
		all_lib = all_lib && own_in(o->lib, o->nlib, pc);
	}
	return all_lib;
}
