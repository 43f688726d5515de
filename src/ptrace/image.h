/* image.h - finds the allocator entries of a process image and keeps breakpoints on them. */
#ifndef JT_IMAGE_H
#define JT_IMAGE_H

#include <sys/types.h>

struct jt_proc;
struct jt_tracer;

/*
 * Called at the exec stop (or after attaching): reads the modules, puts a
 * breakpoint on the dynamic linker's rendezvous if there is one, and on every
 * allocator entry that can already be resolved. Returns 0, or -1 after
 * printing one line when the image cannot be traced (no allocator symbols).
 */
int image_setup(struct jt_proc *p);

/*
 * Called at the dynamic linker's rendezvous: when the link map is consistent,
 * re-reads the modules and puts breakpoints on newly resolvable entries.
 * A traced function that cannot have one is said on stderr, one line each.
 * With may_refuse (the program jmptrace launched), when that happens at the
 * program's startup (the libraries it needs are loaded, its own code has
 * not run: malloc and free had no breakpoint yet), returns IMAGE_REFUSED:
 * the caller ends the run. Otherwise the program runs on and its reports
 * list the function as not traced. At the first consistent link map of
 * the launched program's first image (p->names_due), a function named by --alloc that
 * the program and its libraries do not define is said (named_missing_say)
 * and IMAGE_BAD_NAME returned: the caller ends the run. Returns 0,
 * IMAGE_REFUSED, IMAGE_BAD_NAME or -1.
 */
int image_update(struct jt_proc *p, int may_refuse);
#define IMAGE_REFUSED 1
#define IMAGE_BAD_NAME 2

/*
 * Looks for the breakpoints the kernel took back (bp_check_taken): says
 * each on stderr and in the reports' untraced list, and moves it past its
 * function's first instruction where that is proven (prologue_move), so
 * that later calls are counted again; the calls in flight that would
 * return through it get their return address back. Called at every tick
 * and before a snapshot: calls between the take and then are missed, and
 * said so (and one that returned meanwhile ran the function again).
 */
void image_check_taken(struct jt_tracer *tr, struct jt_proc *p);

/* Non-zero once malloc and free have breakpoints (the image is being traced). */
int image_ready(const struct jt_proc *p);

#endif
