/* uevent.h - what a kernel uprobe sample means: an allocator entered, one returning, or a free. */
#ifndef JT_UEVENT_H
#define JT_UEVENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "uprobes.h"

struct jt_tracer;
struct jt_unwind_ctx;

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

/*
 * t is stopped for a signal's delivery (its earlier samples applied), its
 * registers regs: when it is in the kernel's uretprobe trampoline, returning from its last
 * returned call, that call is kept for its handler's unwinds, which go on
 * from its return address rather than end at the trampoline (unwind.h's
 * unwind_ctx_trampoline). Learns where the trampoline is, if not known yet.
 */
void uevent_signal(struct jt_thread *t, const arch_regs *regs);

#endif
