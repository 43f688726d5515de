/* uevent.c - turns kernel uprobe samples into allocation events: an entry opens a call, its return closes it, a free releases a block. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "alias.h"
#include "alloc.h"
#include "heap.h"
#include "maps.h"
#include "modules.h"
#include "own.h"
#include "proc.h"
#include "record.h"
#include "tracer.h"
#include "uevent.h"
#include "unwind.h"
#include "util.h"

/*
 * The calls in flight of a thread are its jt_call entries, as with the
 * breakpoints; only the return differs: the kernel replaced the return
 * address in the slot with its uretprobe trampoline, which c->trampoline
 * holds, so that code that puts hijacked return addresses back (the C++
 * unwinder's breakpoint, a detach) finds the kernel's and restores it.
 */

/* The word at addr in the sample's stack copy; 0 when the copy does not hold it. */
static int
uevent_stack_word(const struct jt_usample *s, uint64_t addr, uint64_t *out)
{
	uint64_t base = arch_sp(&s->regs);

	if (!s->stack || addr < base || addr - base + sizeof(*out) > s->stack_len)
		return -1;
	memcpy(out, s->stack + (addr - base), sizeof(*out));
	return 0;
}

/*
 * The trampoline is the first slot of the kernel's out-of-line area (x86's
 * UPROBE_XOL_SLOT_BYTES is 128); the others hold instructions being
 * stepped, during which no signal is delivered.
 */
#define UEVENT_TRAMP_LEN 128

/*
 * The kernel's uretprobe trampoline in p: the start of its "[uprobes]"
 * mapping, made at the first return probe's hit. Samples are often
 * applied after the process ended (its last ones, at its exit), so this
 * is read only while it is stopped (uevent_settle), or learnt from a tail
 * call's slot; 0 until then.
 */
static uint64_t
uevent_trampoline_read(struct jt_proc *p)
{
	struct jt_maps maps;

	if (p->utramp)
		return p->utramp;
	/* The process runs: a mapping that changes while the file is read spoils one reading. */
	for (int i = 0; maps_read(p->pid, &maps) < 0; i++)
		if (errno != EINVAL || i == 4) {
					return 0;
		}
	for (size_t i = 0; i < maps.n; i++)
		if (maps.v[i].name && strcmp(maps.v[i].name, "[uprobes]") == 0) {
			p->utramp = maps.v[i].start;
			break;
		}
	maps_clear(&maps);
	return p->utramp;
}

void
uevent_settle(struct jt_thread *t)
{
	uint64_t tramp = uevent_trampoline_read(t->proc);

	for (int i = 0; i < t->ncalls; i++)
		if (t->calls[i].fn != CALL_SIGNAL)
			t->calls[i].trampoline = tramp;
}

void
uevent_signal(struct jt_thread *t, const arch_regs *regs)
{
	uint64_t pc = arch_pc(regs), tramp;

	/* A pc in a module is the program's (and /proc is not read for it). */
	if (modules_find(&t->proc->mods, pc) || !(tramp = uevent_trampoline_read(t->proc)) ||
	    pc - tramp >= UEVENT_TRAMP_LEN)
		return;
	/*
	 * A second signal that comes as the first one's handler returns finds
	 * the same state, but the handler's own calls have returned since: the
	 * call kept at the first stays.
	 */
	if (!unwind_trampoline_near(t->uret_slot, arch_sp(regs)))
		return;
	t->usig_slot = t->uret_slot;
	t->usig_addr = t->uret_addr;
}

/* Reads code through the process's modules' files: the process may be gone, its code is the files'. */
static int
uevent_code_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct jt_proc *p = arg;
	struct jt_module *m = modules_find(&p->mods, addr);
	int r;

	if (!m)
		return -1;
	pthread_mutex_lock(&p->mods.elf_lock);
	r = module_read_code(m, addr, buf, len);
	pthread_mutex_unlock(&p->mods.elf_lock);
	return r;
}

/*
 * Decides whether an entry whose return slot is at sp is nested in a call
 * already in flight on this thread (operator new calling malloc, realloc
 * calling free, a named allocator calling the standard ones). Calls whose
 * slot lies below sp were left by a longjmp or an exception, and a signal
 * handler's mark below sp was left by its return: they go. A handler's mark
 * on top means the handler makes calls of its own. An equal slot is a tail
 * call when it still holds the kernel's trampoline, else the old call was
 * left. A slot above sp that the copy shows holding a return address again
 * (in a module, where the trampoline is not) was left too, by a longjmp out
 * of the call: without that every later call made deeper would be nested.
 */
static int
uevent_nested(struct jt_thread *t, const struct jt_usample *s, uint64_t sp)
{
	uint64_t word;

	while (t->ncalls > 0 && t->calls[t->ncalls - 1].entry_sp < sp)
		t->ncalls--;
	while (t->ncalls > 0) {
		struct jt_call *c = &t->calls[t->ncalls - 1];
		int held;

		if (c->fn == CALL_SIGNAL)
			return 0;
		held = uevent_stack_word(s, c->entry_sp, &word) == 0;
		if (c->entry_sp > sp) {
			if (!held || !modules_find(&t->proc->mods, word))
				return 1;
		} else if (held && word != c->ret_addr && !modules_find(&t->proc->mods, word)) {
			/* A return address lies in a module; the trampoline, which a tail call finds, does not. */
			t->proc->utramp = word;
			return 1;
		}
		t->ncalls--;
	}
	return 0;
}

/*
 * Unwinds the sample's stack copy as the program sees it: the slots of the
 * calls in flight hold the kernel's trampoline and read as the real return
 * addresses (a signal handler interrupted them).
 */
static int
uevent_unwind(struct jt_thread *t, struct jt_unwind_ctx *ctx, const struct jt_usample *s, uint64_t *pcs, int max)
{
	for (int i = 0; i < t->ncalls; i++)
		if (t->calls[i].fn != CALL_SIGNAL)
			unwind_ctx_override(ctx, t->calls[i].entry_sp, t->calls[i].ret_addr);
	if (t->proc->utramp) {
		unwind_ctx_trampoline(ctx, t->proc->utramp, UEVENT_TRAMP_LEN);
		if (t->uret_slot)
			unwind_ctx_returned(ctx, t->uret_slot, t->uret_addr);
		if (t->usig_slot)
			unwind_ctx_returned(ctx, t->usig_slot, t->usig_addr);
	}
	unwind_ctx_stack(ctx, arch_sp(&s->regs), s->stack, s->stack_len);
	unwind_ctx_memo(ctx, &t->umemo);
	return unwind_stack_ctx(t->proc->uw, ctx, t->tid, &s->regs, pcs, max);
}

static void
uevent_enter_alloc(struct jt_thread *t, struct jt_unwind_ctx *ctx, const struct jt_usample *s,
		   const struct jt_options *opt)
{
	struct jt_proc *p = t->proc;
	uint64_t pcs[RECORD_MAX_PCS];
	uint64_t slot = arch_ret_slot(&s->regs) + s->site->sp_delta, ret;
	int fn = s->site->fn, n = 0;
	uint64_t size = record_size(fn, &s->regs);
	int broken_down = record_unwinds(fn, size, opt);
	struct jt_call *c;
	int ended = 0;

	if (uevent_nested(t, s, slot))
		return;
	if (broken_down) {
		n = uevent_unwind(t, ctx, s, pcs, record_max_pcs(opt));
		ended = unwind_ctx_copy_ended(ctx);
	}
	if (n >= 2)
		ret = unwind_pc_addr(pcs[1]);
	else if (uevent_stack_word(s, slot, &ret) < 0)
		ret = 0;
	if (fn == FN_ALIGNED_ALLOC || fn == FN_MEMALIGN) {
		struct jt_mem_ops code = { .read = uevent_code_read, .arg = p };

		fn = alias_resolve(&p->aliases, &code, ret, fn);
	}
	p->calls[fn]++;
	if (t->ncalls == JT_MAX_CALLS)
		return;
	c = &t->calls[t->ncalls++];
	record_call_fill(c, fn, slot, ret, p->utramp, size, &s->regs, record_stack(p, fn, broken_down, pcs, n, ended, opt));
	record_pages_fill(c, &s->regs);
}

/*
 * The dropped blocks a process keeps (jt_proc's udrops): a deferred free
 * waits for its thread's next allocator call, most often a moment; a
 * block dropped for a free never seen (a lost event) is never taken.
 */
#define UEVENT_DROPS_MAX 1024

/* Keeps the block the malloc applied just now dropped, if it did, with that malloc's time. */
static void
uevent_dropped(struct jt_proc *p, uint64_t time)
{
	struct jt_udrop d = { .time = time, .image = p->image };
	uint64_t size;

	if (!heap_take_dropped(p->heap, &d.addr, &size, &d.stack_id) || !time)
		return;
	if (!p->udrops)
		p->udrops = xcalloc(UEVENT_DROPS_MAX, sizeof(*p->udrops));
	if (p->nudrops == UEVENT_DROPS_MAX)
		memmove(p->udrops, p->udrops + 1, --p->nudrops * sizeof(*p->udrops));
	p->udrops[p->nudrops++] = d;
}

/*
 * A free of ptr made at time by t, of a block that a later malloc (of
 * another thread: a thread's own come in order) dropped: the earliest
 * such. It is counted as that block's free. Returns 1, or 0 when ptr is
 * no such block (the live one, if any, is the free's).
 */
static int
uevent_free_dropped(struct jt_thread *t, uint64_t ptr, uint64_t time)
{
	struct jt_proc *p = t->proc;
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < p->nudrops; i++) {
		const struct jt_udrop *d = &p->udrops[i];

		if (d->addr == ptr && d->image == p->image && d->time > time &&
		    (best == SIZE_MAX || d->time < p->udrops[best].time))
			best = i;
	}
	if (best == SIZE_MAX)
		return 0;
	heap_free_dropped(p->heap, p->udrops[best].stack_id, ptr == t->last_alloc);
	t->last_alloc = 0;
	memmove(p->udrops + best, p->udrops + best + 1, (p->nudrops - best - 1) * sizeof(*p->udrops));
	p->nudrops--;
	return 1;
}

/* posix_memalign's out pointer: in the return sample's stack copy (a caller's local), else read now. */
struct uevent_out {
	const struct jt_usample *s;
	pid_t tid;
};

static int
uevent_out_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct uevent_out *o = arg;
	uint64_t base = arch_sp(&o->s->regs);

	if (o->s->stack && addr >= base && addr - base + len <= o->s->stack_len) {
		memcpy(buf, o->s->stack + (addr - base), len);
		return 0;
	}
	return mem_read(o->tid, addr, buf, len);
}

/*
 * The return of a call in flight: the stack pointer a return leaves from its
 * slot. A return of a nested call (no call of ours has that slot) is not
 * one; neither is one of a call whose frame a signal handler's mark covers.
 */
static void
uevent_return(struct jt_thread *t, const struct jt_usample *s)
{
	uint64_t sp = arch_sp(&s->regs);
	struct uevent_out out = { .s = s, .tid = t->tid };
	struct jt_mem_ops mem = { .read = uevent_out_read, .arg = &out };

	for (int i = t->ncalls - 1; i >= 0; i--) {
		struct jt_call *c = &t->calls[i];

		if (c->fn == CALL_SIGNAL || arch_sp_after_ret(c->entry_sp) != sp)
			continue;
		t->ncalls = i;
		t->uret_slot = c->entry_sp;
		t->uret_addr = c->ret_addr;
		uevent_dropped(t->proc, 0);	/* one dropped by a path of no time of ours is not kept */
		record_finish(t, &mem, c, arch_retval(&s->regs));
		uevent_dropped(t->proc, s->time);
		return;
	}
}

/* A free of NULL (only past a moved probe's test it never comes) or of an address that is no live block. */
static uint32_t
uevent_unmatched_free(struct jt_thread *t, struct jt_unwind_ctx *ctx, const struct jt_usample *s, uint64_t ptr,
		      const struct jt_options *opt)
{
	struct jt_proc *p = t->proc;
	uint64_t pcs[RECORD_MAX_PCS];
	int max = record_max_pcs(opt);
	int n = uevent_unwind(t, ctx, s, pcs, max);

	/* A free's copy is short (UPROBES_FREE_COPY): cut there, its callers may be the program's. */
	return record_free_unmatched(p, s->site->fn, ptr, pcs, n, n < max && !unwind_ctx_copy_ended(ctx), opt);
}

static void
uevent_free(struct jt_thread *t, struct jt_unwind_ctx *ctx, const struct jt_usample *s, const struct jt_options *opt)
{
	uint64_t sp = arch_sp(&s->regs) + s->site->sp_delta;
	int fn = s->site->fn;
	uint64_t ptr = record_free_ptr(fn, &s->regs);
	/* delete[] -> delete -> free: the same pointer back to back, each link another function (call.c). */
	int chained = t->free_seq + 1 == t->seq && sp <= t->free_sp && ptr == t->free_ptr && fn != t->free_fn;
	struct jt_call *held = NULL;
	uint32_t unmatched = UINT32_MAX;

	t->free_seq = t->seq;
	t->free_sp = sp;
	t->free_ptr = ptr;
	t->free_fn = fn;
	if (chained)
		return;
	if (uevent_nested(t, s, sp)) {
		record_free_nested(t, &t->calls[t->ncalls - 1], ptr);
		return;
	}
	if (ptr && (uevent_free_dropped(t, ptr, s->time) || record_free(t, ptr) == 0))
		t->proc->calls[fn]++;
	else
		unmatched = uevent_unmatched_free(t, ctx, s, ptr, opt);
	/* A named free is in flight until its uretprobe: the standard frees it makes are nested (alloc.h). */
	if (alloc_fn_free_held(fn) && t->ncalls < JT_MAX_CALLS) {
		uint64_t ret = 0;

		(void)uevent_stack_word(s, sp, &ret);
		held = &t->calls[t->ncalls++];
		record_call_fill(held, fn, sp, ret, t->proc->utramp, 0, &s->regs, 0);
	}
	record_unmatched_held(t->proc, held, ptr, unmatched);
}

int
uevent_apply(struct jt_tracer *tr, struct jt_unwind_ctx *ctx, const struct jt_usample *s)
{
	struct jt_thread *t = thread_find(tr, s->tid);

	if (!t || t->proc->image != s->site->image || t->proc->vfork_child)
		return 0;
	t->seq++;
	if (alloc_fns[s->site->fn].kind == FK_RTLD) {
		/*
		 * An attached process's rendezvous: the link map changed a
		 * moment ago. Tracer thread 0 re-reads it (loop.c), not this
		 * merge of the rings: a new library's probes take long to open,
		 * and there the reader goes on meanwhile (uprobes_open_pending).
		 */
		t->proc->rtld_due = 1;
		return 1;
	}
	/* Applied later than made: a block's age counts from the sample's time, not from now. */
	heap_set_event_time(t->proc->heap, s->time);
	if (s->site->ret)
		uevent_return(t, s);
	else if (alloc_fns[s->site->fn].kind == FK_FREE)
		uevent_free(t, ctx, s, tr->opt);
	else
		uevent_enter_alloc(t, ctx, s, tr->opt);
	heap_set_event_time(t->proc->heap, 0);
	return 1;
}
