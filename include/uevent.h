/* uevent.h - what a kernel uprobe sample means: an allocator entered, one returning, or a free. */
#ifndef JT_UEVENT_H
#define JT_UEVENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct jt_tracer;
struct jt_unwind_ctx;
struct up_def;

/* One probe site of one process image: an allocator's entry, or its return (a uretprobe). */
struct jt_usite {
	int fn;			/* enum jt_fn */
	int ret;		/* a return probe: the sample is the call's return */
	uint64_t entry;		/* the function's entry in the process */
	uint64_t site;		/* where the probe is: entry, or past a harmless early-return test */
	uint64_t sp_delta;	/* what the skipped instructions took off the stack pointer */
	uint64_t image;		/* the image it was placed in (jt_proc.image): a sample of an older one is dropped */
	uint32_t stack;		/* bytes of user stack each sample copies */
	int emulated;		/* the kernel emulates the probed instruction (no single-step) */
	int hook;		/* no sample: a SIGTRAP stops the thread (the rendezvous, a C++ unwinder) */
	struct up_def *def;	/* the kernel's probe definition it is opened on (uprobes.c) */
};

/* One sample, parsed: registers at the probe and the stack copied from their stack pointer. */
struct jt_usample {
	const struct jt_usite *site;
	pid_t pid, tid;
	uint64_t time;		/* UTIL_CLOCK (perf's clockid), ns */
	arch_regs regs;
	const uint8_t *stack;	/* [regs' sp, + stack_len), or NULL */
	size_t stack_len;
};

/*
 * Applies one sample to its thread's calls in flight and its process's
 * tables (tr->tthreads.lock held), unwinding with ctx. A sample of a thread
 * or image we no longer trace is dropped. Returns 1 when it was applied, 0
 * when dropped.
 */
int uevent_apply(struct jt_tracer *tr, struct jt_unwind_ctx *ctx, const struct jt_usample *s);

/*
 * t is stopped (a hook, a detach): learns where the kernel's uretprobe
 * trampoline is, so that t's calls in flight know what their slots hold
 * (call_restore_all puts the real return addresses back before a C++
 * exception unwinds through them).
 */
struct jt_thread;
void uevent_settle(struct jt_thread *t);

#endif
