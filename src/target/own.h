/* own.h - the C library's own code: where glibc frees, at thread exit, memory that is its business alone. */
#ifndef JT_OWN_H
#define JT_OWN_H

#include <stdint.h>

struct jt_module;
struct jt_sym;

#define OWN_MAX_RANGES 16

struct jt_own_range {
	uint64_t lo, hi;	/* [lo, hi) in the target's address space */
};

/*
 * At thread exit glibc's __libc_thread_freeres empties the thread's tcache:
 * it frees chunks the program had freed already and the tcache itself,
 * which _int_malloc made without going through malloc. __libc_freeres does
 * the like for the whole process. Such frees reach the free breakpoint with
 * an address that is no live block, and are neither the program's frees nor
 * invalid ones. This is where the code that makes them lies, resolved once
 * per module when the module is reported.
 */
struct jt_own {
	struct jt_own_range fn[OWN_MAX_RANGES];	/* the teardown functions, by name */
	unsigned nfn;
	struct jt_own_range lib[OWN_MAX_RANGES];	/* shared C libraries, whole */
	unsigned nlib;
};

/*
 * Adds what module m (already reported to sym) holds of the C library's
 * teardown: the named teardown functions that have a size in its symbol
 * table (all of them in a static program, __libc_freeres in libc.so.6,
 * whose other names are stripped), and the whole module when it is the
 * shared C library itself.
 */
void own_scan_module(struct jt_own *o, struct jt_sym *sym, const struct jt_module *m);

/*
 * Decides whether a free whose stack is pcs[0..n) (pcs[0] the free's entry,
 * the others return addresses; complete when the unwind reached the stack's
 * end) is the C library's own: one of its frames lies in a teardown
 * function, or every caller lies in the shared C library, as at the end of
 * a thread, where start_thread has returned from the program's code. Returns
 * non-zero when it is.
 */
int own_free_is_libc(const struct jt_own *o, const uint64_t *pcs, int n, int complete);

#endif
