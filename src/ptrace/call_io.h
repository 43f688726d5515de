/* call_io.h - what call.c uses from call_io.c to reach the target (private to call.c and call_io.c). */
#ifndef JT_CALL_IO_H
#define JT_CALL_IO_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "call.h"
#include "mem.h"

struct jt_thread;
struct jt_bp;
struct jt_options;

/* Storage for call_proc_io. */
struct call_proc {
	struct jt_mem_ops mem;
	struct jt_call_io io;
};

/*
 * Fills *cp as the jt_call_io of thread t itself (its memory by tid, its
 * process's unwinder) and returns it; valid while *cp and t live.
 */
const struct jt_call_io *call_proc_io(struct jt_thread *t, struct call_proc *cp);

/*
 * Holds a small target write back in t (wb_buf) so that adjacent ones share
 * one system call: at an allocation entry the return-address slot and the
 * push the first instruction makes just below it are neighbours. A write
 * that does not fit is made at once. Returns 0 or -1.
 */
int call_write_held(struct jt_thread *t, const struct jt_call_io *io, uint64_t addr, const void *buf,
		    size_t len);

/*
 * Writes the bytes held back for this event (the hijacked slot and an
 * emulated push) through io at once, and forgets them. Returns 0 or -1.
 */
int call_write_back(struct jt_thread *t, const struct jt_call_io *io);

/*
 * Runs the instruction bp displaced on regs through io (unless --no-emulate
 * or it cannot be emulated), then writes back what it held. Returns
 * CALL_RESUME when regs are ready, CALL_STEP when the thread must step.
 */
enum call_action call_emulate(struct jt_thread *t, const struct jt_call_io *io, struct jt_bp *bp,
			      arch_regs *regs, const struct jt_options *opt);

#endif
