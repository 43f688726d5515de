/* alias.h - which name a caller used for an allocator whose names share one address. */
#ifndef JT_ALIAS_H
#define JT_ALIAS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mem.h"

/* GOT slots, in the target's address space, that the dynamic linker fills with an aliased name. */
struct jt_aliases {
	struct { uint64_t got; int fn; } *v;
	size_t n;
};

struct jt_module;

/* Adds the slots of module m that name aligned_alloc or memalign. Returns 0, or -1 when m has no file. */
int alias_scan_module(struct jt_aliases *a, const struct jt_module *m);
void alias_clear(struct jt_aliases *a);

/*
 * Looks at the call that returns to ret (its code read through mem): through a PLT stub or a GOT slot it
 * names the function the program asked for. Returns that enum jt_fn, or fn
 * when the caller jumped to the address directly (a static program, where
 * the two names cannot be told apart).
 */
int alias_resolve(const struct jt_aliases *a, const struct jt_mem_ops *mem, uint64_t ret, int fn);

#endif
