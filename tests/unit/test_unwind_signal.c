/* test_unwind_signal.c - unwinds a child stopped in a signal handler, through the kernel's signal frame to main, with each backend, in every link mode: the frame's interrupted pc in a PLT stub or the uretprobe trampoline, a return address replaced. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/ucontext.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "maps.h"
#include "mem.h"
#include "modules.h"
#include "tap.h"
#include "unwind.h"
#include "unwind_child.h"
#include "util.h"

/* Index of the first frame at or after from whose call lies in function name, or -1. */
static int
find_frame(const struct target *t, const struct jt_module *exe, const uint64_t *pcs, int depth, int from,
	   const char *name)
{
	for (; from < depth; from++)
		if (strcmp(sym_owner(t, pcs[from] - 1 - exe->bias), name) == 0)
			return from;
	return -1;
}

/*
 * What jmptrace does to an allocator call that a signal handler interrupts:
 * the interrupted function (raise here) had its return address, into
 * frame k, replaced by a function's entry address. Unwound from the
 * handler, the stack must go wrong at frame k without an override, and be
 * whole again with one.
 */
static void
test_signal_override(const struct target *t, const char *be, struct jt_unwind *u, const struct child *c,
		     const struct jt_module *exe, const uint64_t *pcs, int depth, int k)
{
	static uint64_t stack[8192];
	uint64_t got[MAX_FRAMES], slot, entry = exe->bias + sym_addr(t, "sig_main");
	size_t i = 0;
	int n;

	if (mem_read(c->tid, c->regs.rsp, stack, sizeof(stack)) == 0)
		for (i = 0; i < ARRAY_SIZE(stack) && stack[i] != pcs[k]; i++)
			;
	ok(i < ARRAY_SIZE(stack), "%s/%s/signal: frame %d's return address is on the stack", be, t->mode, k);
	if (i == ARRAY_SIZE(stack))
		return;
	slot = c->regs.rsp + 8 * i;
	if (mem_write(c->pid, slot, &entry, sizeof(entry)) != 0) {
		ok(0, "%s/%s/signal: cannot replace the return address", be, t->mode);
		return;
	}
	n = unwind_stack(u, c->tid, &c->regs, got, MAX_FRAMES);
	ok(n > k && got[k] == entry, "%s/%s/signal: replaced, frame %d is sig_main's entry", be, t->mode, k);
	unwind_override(u, slot, pcs[k]);
	n = unwind_stack(u, c->tid, &c->regs, got, MAX_FRAMES);
	ok(same_pcs(pcs, depth, got, n), "%s/%s/signal: with the override, the %d frames are whole again",
	   be, t->mode, depth);
	mem_write(c->pid, slot, &pcs[k], sizeof(pcs[k]));
}

/*
 * The kernel's signal frame of the handler c is stopped in: where its
 * saved registers are (gregs), its interrupted pc and stack pointer.
 * Returns 1, or 0 (said) when the frame's pc is not frame 10's.
 */
static int
sigframe(const struct target *t, const char *be, const struct child *c, const uint64_t *pcs, uint64_t *gregs,
	 uint64_t *rip, uint64_t *rsp)
{
	static uint64_t stack[8192];
	uint64_t restorer = unwind_pc_addr(pcs[9]);
	size_t i = 0;

	*gregs = *rip = *rsp = 0;
	/* The handler returns into the sigreturn trampoline through the word just below the ucontext. */
	if (mem_read(c->tid, c->regs.rsp, stack, sizeof(stack)) == 0)
		for (; i < ARRAY_SIZE(stack) && stack[i] != restorer; i++)
			;
	if (i < ARRAY_SIZE(stack)) {
		*gregs = c->regs.rsp + 8 * (i + 1) + offsetof(ucontext_t, uc_mcontext.gregs);
		if (mem_read(c->tid, *gregs + 8 * REG_RIP, rip, 8) != 0 || mem_read(c->tid, *gregs + 8 * REG_RSP, rsp, 8) != 0)
			*rip = 0;
	}
	ok(*rip == pcs[10], "%s/%s/signal: the signal frame found, its pc frame 10's", be, t->mode);
	return *rip == pcs[10];
}

/*
 * A signal that interrupted a PLT stub's jump, which no CFI covers in a
 * static executable (sigstack.t's 1 kHz timer landed there in about one
 * run in 300, and both backends stopped, or went into garbage, at the
 * stub). Overrides make the kernel's signal frame say so: the code it
 * interrupted at pc P, stack pointer S had just called the stub, so the
 * interrupted pc is the stub and P is the return address at S - 8. The
 * unwind must go on through the stub to the very same frames.
 */
static void
test_signal_plt(const struct target *t, const char *be, struct jt_unwind *u, const struct child *c, uint64_t plt,
		const uint64_t *pcs, int depth)
{
	uint64_t got[MAX_FRAMES], gregs, rip, rsp;
	int n, want = depth < MAX_FRAMES ? depth + 1 : MAX_FRAMES;

	if (!sigframe(t, be, c, pcs, &gregs, &rip, &rsp))
		return;
	unwind_override(u, gregs + 8 * REG_RIP, plt);
	unwind_override(u, gregs + 8 * REG_RSP, rsp - 8);
	unwind_override(u, rsp - 8, rip);
	n = unwind_stack(u, c->tid, &c->regs, got, MAX_FRAMES);
	ok(n == want && memcmp(got, pcs, 10 * sizeof(*pcs)) == 0 && got[10] == plt
	   && memcmp(got + 11, pcs + 10, (size_t) (n - 11) * sizeof(*pcs)) == 0,
	   "%s/%s/signal: a signal in the PLT stub at %#llx: the stub, then the %d frames (%d frames)", be, t->mode,
	   (unsigned long long) plt, depth, n);
}

/*
 * A signal that interrupted the kernel's uretprobe trampoline (the uprobe
 * source's), on the return of a call to the interrupted pc P at stack
 * pointer S: overrides make the kernel's signal frame say so, as in
 * test_signal_plt. After the trampoline's syscall the kernel has put P
 * back into the call's slot at S - 8 (written there: an override is a
 * call in flight), and the pc is past that syscall with the stack pointer
 * three words lower (a returned call); before it, the pc is the
 * trampoline's first and the stack pointer S (a call in flight, its slot
 * overridden as the uprobe source does). Either way the unwind goes on
 * from P to the very same frames. With the trampoline not known, or a
 * returned call whose slot holds another word now, it does not.
 */
static void
test_signal_tramp(const struct target *t, const char *be, struct jt_unwind *u, const struct child *c,
		  const uint64_t *pcs, int depth)
{
	/* Where Linux maps it on x86-64; in no module of the child. */
	const uint64_t tramp = 0x7fffffffe000ULL, past = tramp + 13;
	struct jt_unwind_ctx *ctx = unwind_ctx_new();
	uint64_t got[MAX_FRAMES], gregs, rip, rsp, was, other;
	int n;

	if (!sigframe(t, be, c, pcs, &gregs, &rip, &rsp) || mem_read(c->tid, rsp - 8, &was, 8) != 0 ||
	    mem_write(c->pid, rsp - 8, &rip, 8) != 0)
		goto out;
	/* Returned: on from P. */
	unwind_ctx_override(ctx, gregs + 8 * REG_RIP, past);
	unwind_ctx_override(ctx, gregs + 8 * REG_RSP, rsp - 24);
	unwind_ctx_trampoline(ctx, tramp, 128);
	unwind_ctx_returned(ctx, rsp - 8, rip);
	n = unwind_stack_ctx(u, ctx, c->tid, &c->regs, got, MAX_FRAMES);
	ok(same_pcs(pcs, depth, got, n), "%s/%s/signal: in the uretprobe trampoline, a returned call: on from its "
	   "return address, the %d frames", be, t->mode, depth);
	/* The same, the trampoline not known: it is frame 10, and the frames after it are not the program's. */
	unwind_ctx_override(ctx, gregs + 8 * REG_RIP, past);
	unwind_ctx_override(ctx, gregs + 8 * REG_RSP, rsp - 24);
	unwind_ctx_returned(ctx, rsp - 8, rip);
	n = unwind_stack_ctx(u, ctx, c->tid, &c->regs, got, MAX_FRAMES);
	ok(n > 10 && got[10] == past && (n != depth || memcmp(got + 11, pcs + 11, (size_t)(n - 11) * 8) != 0),
	   "%s/%s/signal: the trampoline not known, frame 10 is its pc (%d frames)", be, t->mode, n);
	/* A returned call whose slot holds another word now: not the return under way. */
	other = rip + 1;
	if (mem_write(c->pid, rsp - 8, &other, 8) == 0) {
		unwind_ctx_override(ctx, gregs + 8 * REG_RIP, past);
		unwind_ctx_override(ctx, gregs + 8 * REG_RSP, rsp - 24);
		unwind_ctx_trampoline(ctx, tramp, 128);
		unwind_ctx_returned(ctx, rsp - 8, rip);
		n = unwind_stack_ctx(u, ctx, c->tid, &c->regs, got, MAX_FRAMES);
		ok(n > 10 && got[10] == past, "%s/%s/signal: a returned call whose slot holds another word is not taken",
		   be, t->mode);
	}
	/* In flight: the trampoline's first instruction, the call's slot overridden. */
	unwind_ctx_override(ctx, gregs + 8 * REG_RIP, tramp);
	unwind_ctx_override(ctx, gregs + 8 * REG_RSP, rsp);
	unwind_ctx_override(ctx, rsp - 8, rip);
	unwind_ctx_trampoline(ctx, tramp, 128);
	n = unwind_stack_ctx(u, ctx, c->tid, &c->regs, got, MAX_FRAMES);
	ok(same_pcs(pcs, depth, got, n), "%s/%s/signal: in the uretprobe trampoline, a call in flight: on from its "
	   "return address, the %d frames", be, t->mode, depth);
	mem_write(c->pid, rsp - 8, &was, 8);
out:
	unwind_ctx_free(ctx);
}

/*
 * The chain in a signal handler: through the kernel's signal frame, an
 * exact pc in raise, then sig_main's frame of 100 KB, to main.
 */
static void
test_signal(const struct target *t)
{
	uint64_t pcs[N_BACKENDS][MAX_FRAMES];
	int depth[N_BACKENDS], k;
	struct child c = { 0 };
	struct jt_modules m;
	struct jt_module *exe;
	struct jt_unwind *u;
	size_t i;

	modules_init(&m);
	if (child_start(t, "signal", &c) != 0 || modules_refresh(&m, c.pid) <= 0 || !(exe = main_module(&m))) {
		ok(0, "%s/signal: child stopped in the handler", t->mode);
		goto out;
	}
	for (i = 0; i < N_BACKENDS; i++) {
		u = unwind_new_backend(&m, backends[i]);
		depth[i] = u ? unwind_stack(u, c.tid, &c.regs, pcs[i], MAX_FRAMES) : 0;
		printf("# %s/%s/signal: %d frames\n", backends[i], t->mode, depth[i]);
		ok(check_chain(t, exe, pcs[i], depth[i], chain_signal, 9), "%s/%s/signal: frames are f8..f1 on_signal",
		   backends[i], t->mode);
		ok(signal_marks(pcs[i], depth[i]) == 1ull << 9, "%s/%s/signal: frame 9 alone is marked a signal frame",
		   backends[i], t->mode);
		k = find_frame(t, exe, pcs[i], depth[i], 10, "sig_main");
		ok(k > 10 && find_frame(t, exe, pcs[i], depth[i], k + 1, "main") == k + 1,
		   "%s/%s/signal: then, past the signal frame, sig_main and main (frame %d)", backends[i], t->mode, k);
		if (u && k > 10 && plt_entry(t))
			test_signal_plt(t, backends[i], u, &c, exe->bias + plt_entry(t), pcs[i], depth[i]);
		if (u && k > 10)
			test_signal_tramp(t, backends[i], u, &c, pcs[i], depth[i]);
		if (u && k > 10)
			test_signal_override(t, backends[i], u, &c, exe, pcs[i], depth[i], k);
		unwind_destroy(u);
	}
	for (i = 1; i < N_BACKENDS; i++)
		ok(same_pcs(pcs[0], depth[0], pcs[i], depth[i]), "%s/signal: %s and %s give the same %d pcs",
		   t->mode, backends[0], backends[i], depth[i]);
out:
	child_kill(&c);
	modules_clear(&m);
}

int
main(void)
{
	return child_test_run("jt-unwind-signal", test_signal);
}
