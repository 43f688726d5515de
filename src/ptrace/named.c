/* named.c - the functions named by option, held to what a program defines: at its start, at an attach, at the end. */
#include <stdint.h>

#include "alloc.h"
#include "heap.h"
#include "named.h"
#include "proc.h"
#include "supp.h"
#include "util.h"

/* Where a dynamic program's names were looked for, by when and how it is traced (named_missing_say's line). */
static const char *
named_where(const struct jt_proc *p, enum named_when when)
{
	/* A static program loads nothing: its own symbols are the whole answer. */
	if (p->is_static)
		return "";
	if (when == NAMED_END)
		return ", nor does any library it loaded";
	/*
	 * A misspelt name is the likely cause, but a plugin's function is
	 * defined only once the program dlopens it: say how to wait for that.
	 */
	if (p->attached)
		return ", nor does any library it has loaded; a function of a library it loads later "
		       "with dlopen is given with --alloc-dlopen";
	return ", nor does any library it is linked with; a function of a library it loads later "
	       "with dlopen is given with --alloc-dlopen";
}

int
named_missing_say(const struct jt_proc *p, enum named_when when)
{
	int fn = alloc_named_missing(when == NAMED_START);

	if (fn < 0)
		return 0;
	error_msg("%s %s: %s defines no function of that name%s", alloc_named_option(fn), alloc_fns[fn].symbol,
		  p->exe ? p->exe : p->command, named_where(p, when));
	return 1;
}

/*
 * Non-zero when a stack allocated that is not the C or C++ runtime's own
 * (the built-in suppressions of supp.c: a static program's startup
 * mallocs, stdio's buffers), whatever --suppressions, --show-runtime and
 * --no-default-suppressions say for the reports.
 */
static int
named_program_allocated(const struct jt_proc *p)
{
	struct jt_supp *rt = supp_load(NULL, 0);
	int found = 0;

	supp_add_runtime(rt);
	for (uint32_t id = 0; id < heap_stack_count(p->heap) && !found; id++) {
		const struct jt_stack *st = heap_stack_get(p->heap, id);

		found = st->alloc_calls && !supp_match(rt, p->sym, st);
	}
	supp_free(rt);
	return found;
}

/* Offers the preset image.c saw p's program define (p->preset_seen), unless the program's own code allocated. */
static void
named_offer_preset(const struct jt_proc *p)
{
	int k = p->preset_seen - 1;

	if (k >= 0 && !named_program_allocated(p))
		error_msg("%s defines %s, and the standard allocator functions were called only by the C runtime: to trace its allocator, "
			  "run again with --alloc-preset %s", p->exe ? p->exe : p->command, alloc_preset_key(k),
			  alloc_preset_name(k));
}

int
named_end(const struct jt_proc *p)
{
	named_offer_preset(p);
	return named_missing_say(p, NAMED_END) ? 2 : 0;
}
