/* leak_roots.h - the roots of a leak check in a stopped process: registers, stacks, TLS, the modules' data and the program's own mappings. */
#ifndef JT_LEAK_ROOTS_H
#define JT_LEAK_ROOTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "leak.h"

/* What one stopped thread contributes: its registers, and where its stack and TLS are. */
struct leak_thread_regs {
	uint64_t words[32];	/* its general registers, each a root word */
	unsigned nwords;
	uint64_t sp;		/* stack pointer: the stack is scanned from sp - 128 (the red zone) up */
	uint64_t tp;	/* its thread pointer (x86-64 TLS variant II: static TLS below, TCB above) */
	int ended;	/* a thread that ended, whose stack the C library keeps cached: no
			   registers, no stack (sp 0), only its TLS and TCB at tp are roots */
};

/*
 * The thread blocks of ended threads whose stacks glibc keeps mapped for
 * reuse, found in process pid's anonymous mappings of maps (the text of
 * /proc/PID/maps) with no stack pointer of th[0..nth) in them: a TCB
 * starts with a pointer to itself, and its self field (two words on)
 * holds the same. Appends an entry with ended set per block to *th
 * (realloc'ed), and returns how many.
 */
size_t leak_roots_ended(pid_t pid, const char *maps, struct leak_thread_regs **th, size_t *nth);

/* The roots of one leak check (leak_input's roots, words and vtables). */
struct leak_roots {
	struct leak_region *regions;
	size_t nregions;
	uint64_t *words;
	size_t nwords;
	struct leak_region *vtables;	/* file-backed, not writable, sorted by start */
	size_t nvtables;
	struct leak_region *texts;	/* file-backed and executable, sorted by start */
	size_t ntexts;
	unsigned nthreads;
};

/*
 * The pure part, for unit tests: plans the roots from the text of
 * /proc/PID/maps, the threads' registers th[0..nth) and the live blocks
 * b[0..n) (sorted by address). tls_size is the static TLS the modules ask
 * for (the sum of their PT_TLS sizes), scanned below each thread pointer
 * besides a margin. attached: blocks older than the attach are unknown, so
 * heap memory that is no known block is a root too. Returns 0 or -1.
 */
int leak_roots_plan(const char *maps, const struct leak_thread_regs *th, size_t nth, const struct leak_block *b,
		    size_t n, uint64_t tls_size, int attached, struct leak_roots *out);

/*
 * Takes the ranges cut[0..ncut) (in any order, may overlap) out of r's
 * regions, which stay sorted: memory that must be no root although its
 * mapping is (glibc malloc's arenas in the C library's data).
 */
void leak_roots_cut(struct leak_roots *r, const struct leak_region *cut, size_t ncut);

struct jt_tracer;
struct jt_proc;

/*
 * Collects the roots of p, every thread of which is stopped (or exiting):
 * reads /proc/PID/maps and each thread's registers, then leak_roots_plan,
 * less glibc malloc's arenas (leak_arenas).
 * Returns 0, or -1 with nothing in out.
 */
int leak_roots_collect(struct jt_tracer *tr, struct jt_proc *p, const struct leak_block *b, size_t n,
		       struct leak_roots *out);

/* Reads len bytes at addr of the process whose pid_t arg points to (mem_read): 0 or -1. */
int leak_roots_read(void *arg, uint64_t addr, void *buf, size_t len);

/* Frees what r holds and zeroes it. */
void leak_roots_clear(struct leak_roots *r);

#endif
