/* named.h - the functions named by --alloc, --alloc-dlopen and --alloc-preset, held to what a program defines. */
#ifndef JT_NAMED_H
#define JT_NAMED_H

struct jt_proc;

/* When a missing name is an error (alloc_named_missing's at_start). */
enum named_when {
	NAMED_START,	/* the program and the libraries it is linked with are loaded, its code has not run */
	NAMED_END,	/* tracing is over: --alloc-dlopen's names had their chance too */
};

/*
 * When a function named by --alloc (at NAMED_END, by --alloc-dlopen too)
 * was found in no image traced so far, says so in one line on stderr,
 * naming the option and p's program, and returns 1; else returns 0. At
 * NAMED_START the line says how to name a function of a library the
 * program loads later with dlopen.
 */
int named_missing_say(const struct jt_proc *p, enum named_when when);

/*
 * At the end of tracing p: offers in one line a preset not asked for
 * whose allocator p's program defines (je_malloc, mi_malloc, tc_malloc)
 * when no traced function was called but by the C runtime's own code, and
 * says a missing name (named_missing_say). Returns the exit status that
 * calls for: 2 for a missing name, else 0.
 */
int named_end(const struct jt_proc *p);

#endif
