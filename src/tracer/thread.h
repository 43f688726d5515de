/* thread.h - the control block of one traced thread (strace's tcb): its calls in flight, its state, its hand-over and uprobe parts. */
#ifndef JT_THREAD_H
#define JT_THREAD_H

#include <sched.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "arch.h"
#include "tstate.h"

struct jt_proc;
struct jt_tthread;
struct jt_unwind_memo;
struct up_ring;

#define JT_MAX_CALLS 16		/* allocator calls in flight on one thread (signal handlers nest) */

/* The fn of a jt_call that marks a signal handler entered while calls were in flight. */
#define CALL_SIGNAL (-1)

/* One allocator call in flight whose return we wait for. */
struct jt_call {
	int fn;			/* enum jt_fn */
	int unmatched;		/* a named free whose pointer (ptr_arg) was no live block: an invalid free
				   made from stack_id, unless a free it makes releases a block (record.h) */
	uint64_t entry_sp;	/* stack pointer at entry: the slot that holds the return address */
	uint64_t ret_addr;	/* the real return address, replaced by the trampoline */
	uint64_t trampoline;	/* where the call now returns: the function's own entry breakpoint */
	uint64_t size;		/* bytes requested */
	uint64_t ptr_arg;	/* realloc's old block, posix_memalign's out pointer, a named free's block */
	uint32_t stack_id;	/* in the heap's stack table, or for a pages function (--pages) the pages' */
	uint64_t len2;		/* --pages: mremap's old length */
	uint64_t flags;		/* --pages: mmap's and mremap's flags */
};

/* Everything about one traced thread (strace's tcb). */
struct jt_thread {
	pid_t tid;
	struct jt_proc *proc;
	struct jt_thread *hnext;	/* tid hash chain */
	struct jt_call calls[JT_MAX_CALLS];
	int ncalls;
	uint64_t seq;			/* events seen on this thread */
	/* The last free-family entry, so that delete -> free counts once. */
	uint64_t free_seq, free_sp, free_ptr;
	int free_fn;
	/* Its last allocation, until its next free: a free of it is temporary (heaptrack's sense). */
	uint64_t last_alloc;
	uint64_t resume_pc, resume_sp;	/* pc and stack pointer our last breakpoint hit let it go on with */
	struct jt_unwind_memo *umemo;	/* its last unwind, to shortcut the next (unwind.h); used by whoever unwinds it */
	/*
	 * Its event is handled; it must still step over step_addr. Orthogonal
	 * to state: the work goes with it while it is held, handed over or
	 * parked, until stopall.c steps it (or a detach drops it).
	 */
	int step_pending;
	uint64_t step_addr;
	uint64_t wb_addr;		/* target bytes held back to write in one go (call.c) */
	size_t wb_len;
	uint8_t wb_buf[32];
	enum jt_thread_state state;	/* where it is as far as we are concerned (thread_is_stopped...) */
	int pending_sig;		/* a signal for the program we hold while it is stopped */
	/*
	 * Resumed from a vfork event: waits in the kernel for its child (until
	 * its next stop). A fact about the kernel side, orthogonal to state: it
	 * cannot stop meanwhile, so it counts as stopped for whole-process work.
	 */
	int vforking;
	struct jt_tthread *owner;	/* the tracer thread that traces it (or is being handed it) */
	int active;			/* it hit a breakpoint at least once (counted in owner->nactive) */
	struct jt_thread *inext;	/* inbox or deferred list link */
	arch_regs park_regs;		/* its real registers while parked */
	uint64_t park_mask;		/* its real signal mask while parked */
	int pin_cpu;			/* --pin: the CPU we pinned it to, or -1 */
	int born_traced;		/* created while we traced its process (or its parent) */
	cpu_set_t pin_saved;		/* --pin: its affinity before, given back at detach */
	/* --source uprobe (uprobes.c): its perf events, one per probe, and the ring they write into. */
	int *ufds;
	int nufds;
	struct up_ring *uring;
	int uhook;			/* the BPF path: fn + 1 of the hook whose SIGTRAP is on its way to it, else 0 */
	uint64_t utop;			/* the BPF path: the stack top the program has for it (uprobes_bpf_top), else 0 */
	uint64_t upf_seq;		/* the BPF path: the number of its last deferred free applied (up_bpf.h's pf_seq) */
	/*
	 * The uprobe source: the slot and return address of its last call
	 * that returned through the kernel's trampoline, and of the one a
	 * signal found it returning from (a handler's calls return too), for
	 * its handlers' unwinds (unwind_ctx_returned).
	 */
	uint64_t uret_slot, uret_addr;
	uint64_t usig_slot, usig_addr;
};

/*
 * The one writer of t->state: every change goes through here, and a JT_DEBUG
 * build checks it against tstate.h's edges.
 */
static inline void
thread_set_state(struct jt_thread *t, enum jt_thread_state s)
{
	tstate_check(t->tid, t->state, s);
	t->state = s;
}

/* It sits in a stop we hold (a group-stop too). */
static inline int
thread_is_stopped(const struct jt_thread *t)
{
	return t->state == TS_STOPPED || t->state == TS_GROUP_STOPPED;
}

/* We asked it to stop: its next stop is collected, not handled (stopall_collect). */
static inline int
thread_wants_stop(const struct jt_thread *t)
{
	return t->state == TS_STOPPING || thread_is_stopped(t);
}

/* Parked on its way to another tracer thread: nobody traces it. */
static inline int
thread_in_transit(const struct jt_thread *t)
{
	return t->state == TS_IN_TRANSIT;
}

#endif
