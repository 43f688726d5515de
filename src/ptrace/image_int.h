/* image_int.h - private to src/ptrace/image*.c: what placing a breakpoint and taking one back share. */
#ifndef JT_IMAGE_INT_H
#define JT_IMAGE_INT_H

#include <stdint.h>

struct jt_module;
struct jt_proc;

/* What another tracer's trap byte on an entry most likely is. */
#define IMAGE_FOREIGN_BP "its entry already holds a breakpoint (a kernel uprobe from bpftrace, perf probe or another tracer?)"
/* What it means when the kernel put an entry's first byte back (bp_check_taken). */
#define IMAGE_TAKEN_BP "the kernel took its breakpoint back: a kernel uprobe on the same instruction, for another " \
	"process (bpftrace -p, bcc, perf probe, a jmptrace --source uprobe), claims every trap there"

/*
 * Puts fn's breakpoint past the first instruction of its entry at addr in
 * m where prologue_move proves that safe (cause: why the entry cannot hold
 * it). Returns NULL, or why it cannot.
 */
const char *image_place_moved(struct jt_proc *p, struct jt_module *m, int fn, uint64_t addr, const char *cause);

/* Lists fn at addr in m as not traced, with why, for stderr and the reports. */
void image_untraced_add(struct jt_proc *p, const struct jt_module *m, int fn, uint64_t addr, const char *why);

#endif
