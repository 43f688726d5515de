/* call.c - turns breakpoint hits into allocation events, matching each call with its return. */
#include <signal.h>
#include <string.h>

#include "alloc.h"
#include "call.h"
#include "call_io.h"
#include "heap.h"
#include "image.h"
#include "own.h"
#include "proc.h"
#include "record.h"
#include "tracer.h"
#include "unwind.h"
#include "util.h"

/* The return address slot of call c no longer holds our trampoline's job: forget c. */
static void
call_drop_top(struct jt_thread *t)
{
	t->ncalls--;
}

void
call_restore_all_io(struct jt_thread *t, const struct jt_call_io *io)
{
	while (t->ncalls > 0) {
		struct jt_call *c = &t->calls[t->ncalls - 1];
		uint64_t cur;

		if (c->fn == CALL_SIGNAL) {
			call_drop_top(t);
			continue;
		}
		/* Only put it back if the slot still holds our trampoline; the frame may be gone. */
		if (io->mem->read(io->mem->arg, c->entry_sp, &cur, sizeof(cur)) == 0 && cur == c->trampoline)
			io->mem->write(io->mem->arg, c->entry_sp, &c->ret_addr, sizeof(c->ret_addr));
		call_drop_top(t);
	}
}

void
call_restore_all(struct jt_thread *t)
{
	struct call_proc cp;

	call_restore_all_io(t, call_proc_io(t, &cp));
}

/* Non-zero while the return-address slot of c still holds our trampoline. */
static int
call_slot_live(const struct jt_call_io *io, const struct jt_call *c)
{
	uint64_t slot;

	if (c->fn == CALL_SIGNAL)
		return 0;
	return io->mem->read(io->mem->arg, c->entry_sp, &slot, sizeof(slot)) == 0 && slot == c->trampoline;
}

/*
 * Drops calls whose frames lie above sp and whose slot no longer holds our
 * trampoline: they were left by longjmp or an exception. A call above sp
 * whose slot still holds it is kept, since the thread may be running a
 * signal handler on another stack and will come back to return through it.
 */
static void
call_drop_stale(struct jt_thread *t, const struct jt_call_io *io, uint64_t sp)
{
	while (t->ncalls > 0 && t->calls[t->ncalls - 1].entry_sp < sp &&
	       !call_slot_live(io, &t->calls[t->ncalls - 1]))
		call_drop_top(t);
}

/*
 * A thread arrived at the entry breakpoint with the stack pointer a return
 * leaves (arch_sp_after_ret) from the slot of a call in flight that returns
 * through this breakpoint: that is the return. Returns the call's index, or
 * -1 for a fresh entry.
 */
static int
call_find_return(const struct jt_thread *t, uint64_t addr, uint64_t sp)
{
	for (int i = t->ncalls - 1; i >= 0; i--)
		if (t->calls[i].trampoline == addr && arch_sp_after_ret(t->calls[i].entry_sp) == sp)
			return i;
	return -1;
}

static void
call_return(struct jt_thread *t, const struct jt_call_io *io, int i, arch_regs *regs)
{
	struct jt_call *c = &t->calls[i];

	t->ncalls = i;
	record_finish(t, io->mem, c, arch_retval(regs));
	arch_set_pc(regs, c->ret_addr);
}

/*
 * Decides whether an entry at sp is nested in a call already in flight on
 * this thread. Equal stack pointers mean either a tail call (the slot still
 * holds our trampoline) or a call made after the old one was abandoned. A
 * call whose slot lies above sp but no longer holds our trampoline was left
 * too (a named allocator that longjmps out): it goes, or every later call
 * made deeper than it would pass for its own business.
 */
static int
call_is_nested(struct jt_thread *t, const struct jt_call_io *io, uint64_t sp)
{
	call_drop_stale(t, io, sp);
	while (t->ncalls > 0) {
		struct jt_call *c = &t->calls[t->ncalls - 1];
		uint64_t slot;

		/* A signal handler that runs inside an allocator call makes calls of its own. */
		if (c->fn == CALL_SIGNAL || c->entry_sp < sp)
			return 0;
		/*
		 * Above sp, only a slot read to hold something else was left: a
		 * call dropped while in flight would come back to an unknown trampoline.
		 */
		if (c->entry_sp == sp ? call_slot_live(io, c)
				      : io->mem->read(io->mem->arg, c->entry_sp, &slot, sizeof(slot)) < 0 ||
					slot == c->trampoline)
			return 1;
		call_drop_top(t);
	}
	return 0;
}

_Static_assert(JT_MAX_CALLS <= UNWIND_MAX_OVERRIDES, "every call in flight can be overridden");

/*
 * Unwinds t as the program sees its stack: each return address that a call
 * in flight replaced with our trampoline reads as the real one. An entry
 * finds calls in flight only in a signal handler that interrupted them, at
 * any depth of nesting; without the overrides the handler's stack would
 * pass the signal frame and the interrupted allocator, then stop at the
 * allocator's own entry address or go on into garbage.
 */
static int
call_unwind(struct jt_thread *t, const struct jt_call_io *io, const arch_regs *regs, uint64_t *pcs, int max)
{
	for (int i = 0; i < t->ncalls; i++)
		if (call_slot_live(io, &t->calls[i]))
			io->override(io->arg, t->calls[i].entry_sp, t->calls[i].ret_addr);
	return io->unwind(io->arg, regs, pcs, max);
}

static void
call_enter_alloc(struct jt_thread *t, const struct jt_call_io *io, struct jt_bp *bp, arch_regs *regs,
		 const struct jt_options *opt)
{
	struct jt_proc *p = t->proc;
	uint64_t pcs[RECORD_MAX_PCS];
	/* Past a moved breakpoint's first instruction, the slot is where it was at the entry. */
	uint64_t slot = arch_ret_slot(regs) + bp->sp_delta, ret;
	struct jt_call *c;
	int fn = bp->fn, n = 0;
	/* --min-size/--max-size: an allocation left out of the breakdown is not unwound at all. */
	uint64_t size = record_size(fn, regs);
	int broken_down = record_unwinds(fn, size, opt);

	if (broken_down)
		n = call_unwind(t, io, regs, pcs, record_max_pcs(opt));
	/* At the first instruction (or a moved breakpoint) the return address is the word in the slot. */
	if (n >= 2)
		ret = unwind_pc_addr(pcs[1]);
	else if (io->mem->read(io->mem->arg, slot, &ret, sizeof(ret)) < 0)
		return;
	if (fn == FN_ALIGNED_ALLOC || fn == FN_MEMALIGN)
		fn = alias_resolve(&p->aliases, io->mem, ret, fn);
	p->calls[fn]++;
	if (t->ncalls == JT_MAX_CALLS)
		return;
	c = &t->calls[t->ncalls];
	record_call_fill(c, fn, slot, ret, bp->addr, size, regs, record_stack(p, fn, broken_down, pcs, n, 0, opt));
	record_pages_fill(c, regs);
	/* Make the call return into our own breakpoint, so every exit path is seen. */
	if (call_write_held(t, io, slot, &c->trampoline, sizeof(c->trampoline)) < 0)
		return;
	t->ncalls++;
}

/*
 * A free of NULL or of an address that is no live block. glibc's thread and
 * process teardown frees chunks the program freed before (its tcache) and
 * blocks it made without malloc: those are its own business, neither calls
 * of the program nor unknown frees. Anything else is the program's: free(NULL)
 * is only a call; a free of an address it may have allocated unseen (before
 * an attach, or in its parent) is an unknown free; otherwise it is an invalid
 * free, made from the stack returned (UINT32_MAX for none; the caller records
 * it, record_unmatched_held). Only this rare path unwinds.
 */
static uint32_t
call_unmatched_free(struct jt_thread *t, const struct jt_call_io *io, int fn, uint64_t ptr,
		    const arch_regs *regs, uint64_t entry_sp, const struct jt_options *opt)
{
	struct jt_proc *p = t->proc;
	uint64_t pcs[RECORD_MAX_PCS];
	int max = record_max_pcs(opt);
	int n = call_unwind(t, io, regs, pcs, max);

	/*
	 * An unwind that found no caller (seen a few times in a hundred runs
	 * of thread exits under the sanitizer build on a loaded host): the
	 * word at the entry's stack pointer still names it, which is what
	 * tells glibc's teardown (own.h) from the program. Taken as the whole
	 * stack: a caller inside the shared C library makes the free its own,
	 * as a stack all inside it would.
	 */
	if (n < 2 && max >= 2 && io->mem->read(io->mem->arg, entry_sp, &pcs[1], sizeof(pcs[1])) == 0) {
		debug_msg("thread %d: the unwind of a free of %#llx found no caller: its return address instead",
			  t->tid, (unsigned long long)ptr);
		pcs[0] = arch_pc(regs);
		return record_free_unmatched(p, fn, ptr, pcs, 2, 1, opt);
	}
	/*
	 * Not even that word: the thread has no memory left. Its process is
	 * ending (exit_group killed it in this stop, while a thread that had
	 * returned still freed its tcache: frees.t's detached thread, about 1
	 * run in 20 under the sanitizer build in CI, each time one "invalid
	 * free" with no frame and one free call too many). Whose free it was
	 * cannot be told, and it frees nothing the report will show: not
	 * counted, rather than blamed on the program.
	 */
	if (n < 2) {
		debug_msg("thread %d: a free of %#llx whose stack cannot be read (its process is ending): not counted",
			  t->tid, (unsigned long long)ptr);
		return UINT32_MAX;
	}
	return record_free_unmatched(p, fn, ptr, pcs, n, n < max, opt);
}

/*
 * A named free (alloc_fn_free_held) stays in flight until it returns, so
 * that the standard frees it makes are nested: its return address goes
 * through our breakpoint as an allocation's does. Full calls[] or a slot
 * that cannot be read leave it untracked: its inner free is then counted.
 * Returns the call, or NULL.
 */
static struct jt_call *
call_hold_free(struct jt_thread *t, const struct jt_call_io *io, struct jt_bp *bp, const arch_regs *regs,
	       uint64_t slot)
{
	struct jt_call *c;
	uint64_t ret;

	if (!alloc_fn_free_held(bp->fn) || t->ncalls == JT_MAX_CALLS ||
	    io->mem->read(io->mem->arg, slot, &ret, sizeof(ret)) < 0)
		return NULL;
	c = &t->calls[t->ncalls];
	record_call_fill(c, bp->fn, slot, ret, bp->addr, 0, regs, 0);
	if (call_write_held(t, io, slot, &c->trampoline, sizeof(c->trampoline)) < 0)
		return NULL;
	t->ncalls++;
	return c;
}

static void
call_enter_free(struct jt_thread *t, const struct jt_call_io *io, struct jt_bp *bp, arch_regs *regs,
		const struct jt_options *opt)
{
	uint64_t sp = arch_sp(regs) + bp->sp_delta;	/* as it was at the entry */
	uint64_t ptr = record_free_ptr(bp->fn, regs);
	/*
	 * delete[] -> delete -> free reach us back to back with the same pointer:
	 * count the outer one. Each link is another function; the same function
	 * twice is the program freeing the pointer twice.
	 */
	int chained = t->free_seq + 1 == t->seq && sp <= t->free_sp && ptr == t->free_ptr &&
		      bp->fn != t->free_fn;
	uint32_t unmatched = UINT32_MAX;

	t->free_seq = t->seq;
	t->free_sp = sp;
	t->free_ptr = ptr;
	t->free_fn = bp->fn;
	if (chained)
		return;
	if (call_is_nested(t, io, sp)) {
		record_free_nested(t, &t->calls[t->ncalls - 1], ptr);
		return;
	}
	if (ptr && record_free(t, ptr) == 0)
		t->proc->calls[bp->fn]++;
	else
		unmatched = call_unmatched_free(t, io, bp->fn, ptr, regs, sp, opt);
	/* Unwound first: the unwind must find the real return address in the free's own slot. */
	record_unmatched_held(t->proc, call_hold_free(t, io, bp, regs, sp), ptr, unmatched);
}

void
call_signal_delivered(struct jt_thread *t, uint64_t sp)
{
	struct jt_call *c;

	if (t->ncalls == 0)
		return;
	/*
	 * A mark on top already says that what comes is a handler's. Nothing
	 * tells us when a handler returns, so a second mark would pile up on
	 * it: a 1 kHz timer interrupts one long call again and again, and
	 * full calls[] would make the handlers' own calls go unrecorded. The
	 * outermost stack pointer keeps the mark while either handler runs.
	 */
	c = &t->calls[t->ncalls - 1];
	if (c->fn == CALL_SIGNAL) {
		if (sp > c->entry_sp)
			c->entry_sp = sp;
		return;
	}
	if (t->ncalls == JT_MAX_CALLS)
		return;
	c = &t->calls[t->ncalls++];
	memset(c, 0, sizeof(*c));
	c->fn = CALL_SIGNAL;
	c->entry_sp = sp;
}

/*
 * The launched program needs a function that cannot be traced, or was
 * given a name of --alloc it does not define (image_update said which):
 * it ends before its own code runs, and so does the run, as when its first
 * image cannot be traced (lifecycle.c). A bad name is a usage error (exit 2).
 */
static void
call_refuse(struct jt_tracer *tr, struct jt_proc *p, int bad_name)
{
	kill(p->pid, SIGKILL);
	tr->fatal = 1;
	tr->bad_names |= bad_name;
}

int
call_settle_io(struct jt_thread *t, const struct jt_call_io *io, arch_regs *regs)
{
	int i = call_find_return(t, arch_pc(regs), arch_sp(regs));

	if (i < 0)
		return 0;
	call_return(t, io, i, regs);
	return 1;
}

int
call_settle(struct jt_thread *t, arch_regs *regs)
{
	struct call_proc cp;

	return call_settle_io(t, call_proc_io(t, &cp), regs);
}

void
call_on_hook_io(struct jt_thread *t, const struct jt_call_io *io, int fn)
{
	int r;

	if (alloc_fns[fn].kind == FK_UNWIND) {
		call_restore_all_io(t, io);
		return;
	}
	/* The module set and breakpoints change: no unwind of this process may be reading them. */
	if (t->owner)
		proc_unwinds_quiesce(t->owner->tr, t->proc);
	r = image_update(t->proc, t->owner && t->proc->pid == t->owner->tr->main_pid);
	if (t->owner && (r == IMAGE_REFUSED || r == IMAGE_BAD_NAME))
		call_refuse(t->owner->tr, t->proc, r == IMAGE_BAD_NAME);
	if (t->owner)
		proc_unwinds_allow(t->proc);
}

void
call_on_hook(struct jt_thread *t, int fn)
{
	struct call_proc cp;

	call_on_hook_io(t, call_proc_io(t, &cp), fn);
}

enum call_action
call_on_trap_io(struct jt_thread *t, const struct jt_call_io *io, struct jt_bp *bp, arch_regs *regs,
		const struct jt_options *opt)
{
	uint64_t sp = arch_sp(regs);
	int i;

	t->seq++;
	if (t->proc->vfork_child)
		return call_emulate(t, io, bp, regs, opt);
	switch (alloc_fns[bp->fn].kind) {
	case FK_RTLD:
	case FK_UNWIND:
		call_on_hook_io(t, io, bp->fn);
		break;
	case FK_EXIT:
		/* The process ends now, its memory intact: check it before it goes on (stop.c). */
		t->proc->leak_due = t->proc->leak_check;
		break;
	case FK_FREE:
		/* A named free returns through its entry breakpoint (call_hold_free). */
		if (t->ncalls && (i = call_find_return(t, bp->addr, sp)) >= 0) {
			call_return(t, io, i, regs);
			return CALL_RESUME;
		}
		call_enter_free(t, io, bp, regs, opt);
		break;
	default:
		if ((i = call_find_return(t, bp->addr, sp)) >= 0) {
			call_return(t, io, i, regs);
			return CALL_RESUME;
		}
		/* Nested: an allocator's own mmap or sbrk (a large block, an arena): its pages are the heap's. */
		if (!call_is_nested(t, io, sp + bp->sp_delta))
			call_enter_alloc(t, io, bp, regs, opt);
		else
			debug_msg("nested %s in thread %d at sp %#lx (%d in flight, top %s sp %#lx)",
				  alloc_fns[bp->fn].name, t->tid, (unsigned long)sp, t->ncalls,
				  t->calls[t->ncalls - 1].fn >= 0 ? alloc_fns[t->calls[t->ncalls - 1].fn].name : "signal",
				  (unsigned long)t->calls[t->ncalls - 1].entry_sp);
		break;
	}
	return call_emulate(t, io, bp, regs, opt);
}

enum call_action
call_on_trap(struct jt_thread *t, struct jt_bp *bp, arch_regs *regs, const struct jt_options *opt)
{
	struct call_proc cp;

	return call_on_trap_io(t, call_proc_io(t, &cp), bp, regs, opt);
}
