/* test_unwind_copy.c - unwinds a child's known call chain (in main, a second thread, a signal handler) from a copy of its stack, as the uprobe source does, with each backend, in every link mode. */
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

#define BENCH_CALLS	10000
#define COPY_SWEEP	16384	/* a copy cut every 8 bytes up to this length, then at each return address */
#define NO_SLOT		SIZE_MAX

/* Unwinds tid from the copy of [sp, sp + len), as the uprobe source does; pcs up to MAX_FRAMES. */
static int
copy_unwind(struct jt_unwind *u, struct jt_unwind_ctx *ctx, const struct child *c, const uint8_t *copy,
	    size_t len, uint64_t *pcs)
{
	unwind_ctx_stack(ctx, c->regs.rsp, copy, len);
	return unwind_stack_ctx(u, ctx, c->tid, &c->regs, pcs, MAX_FRAMES);
}

/*
 * Where in the copy each frame's return address lies: slot[k] is the
 * offset of pcs[k] (k >= 1), or NO_SLOT when it is not there as a plain slot
 * (an interrupted pc lies inside a signal frame). The highest below the
 * caller's wins: copies lie below, stale or pushed (f6 realigns its frame
 * with one).
 */
static void
copy_slots(const uint8_t *copy, size_t len, const uint64_t *pcs, int depth, size_t *slot)
{
	size_t hi = len & ~(size_t) 7, at;
	uint64_t word;
	int k;

	for (k = depth - 1; k >= 1; k--) {
		slot[k] = NO_SLOT;
		if (pcs[k - 1] & UNWIND_PC_SIGNAL)
			continue;
		for (at = hi; at >= 8; at -= 8) {
			memcpy(&word, copy + at - 8, 8);
			if (word == unwind_pc_addr(pcs[k]))
				break;
		}
		if (at >= 8)
			slot[k] = hi = at - 8;
	}
}

/*
 * Copies cut short of the whole stack: every 8 bytes up to COPY_SWEEP, and
 * just past each frame's return address. Each must give a prefix of the
 * live pcs, no shorter for a longer copy, and at least the frames whose
 * return addresses it holds. The live stack is junk by now, so a read
 * past the copy would show as a wrong frame. Returns the failures.
 */
static int
copy_sweep(struct jt_unwind *u, struct jt_unwind_ctx *ctx, const struct child *c, const uint8_t *copy,
	   size_t len, const uint64_t *pcs, int depth, size_t *full_at)
{
	uint64_t got[MAX_FRAMES];
	size_t slot[MAX_FRAMES], cut;
	int k, n, last = 1, bad = 0;

	copy_slots(copy, len, pcs, depth, slot);
	*full_at = 0;
	for (cut = 0; cut <= len && cut <= COPY_SWEEP; cut += 8) {
		n = copy_unwind(u, ctx, c, copy, cut, got);
		if (n < last || n > depth || memcmp(got, pcs, (size_t) n * sizeof(*got)) != 0) {
			if (!bad++)
				printf("# a copy of %zu bytes gives %d frames, not a prefix of the %d live ones after %d\n",
				       cut, n, depth, last);
		}
		/* A stack cut short says so (the report marks it); a whole one does not. */
		if (unwind_ctx_copy_ended(ctx) != (n < depth)) {
			if (!bad++)
				printf("# a copy of %zu bytes gives %d of %d frames, but says the copy %s\n", cut, n,
				       depth, n < depth ? "did not end it" : "ended it");
		}
		last = n;
		if (n == depth && !*full_at)
			*full_at = cut;
	}
	for (k = 1; k < depth; k++) {
		if (slot[k] == NO_SLOT)
			continue;
		n = copy_unwind(u, ctx, c, copy, slot[k] + 8, got);
		if (n < k + 1 || n > depth || memcmp(got, pcs, (size_t) n * sizeof(*got)) != 0) {
			if (!bad++)
				printf("# a copy up to frame %d's return address (%zu bytes) gives %d frames\n", k,
				       slot[k] + 8, n);
		}
		if (n == depth && (!*full_at || slot[k] + 8 < *full_at))
			*full_at = slot[k] + 8;
	}
	return bad;
}

/* bench for unwinds from a copy: no system call for the stack, and the modules' bytes come from the caches. */
static void
bench_copy(const char *be, const char *mode, struct jt_unwind *u, struct jt_unwind_ctx *ctx, const struct child *c,
	   const uint8_t *copy, size_t len, int depth)
{
	uint64_t pcs[MAX_FRAMES];
	int i, same = 1;
	double t0 = now_us();

	for (i = 0; i < BENCH_CALLS; i++)
		same &= copy_unwind(u, ctx, c, copy, len, pcs) == depth;
	printf("# %s/%s: %.2f us per unwind of %d frames from a copy of %zu bytes (%d calls)\n",
	       be, mode, (now_us() - t0) / BENCH_CALLS, depth, len, BENCH_CALLS);
	ok(same, "%s/%s copy: %d repeated unwinds give the same depth", be, mode, BENCH_CALLS);
}

/*
 * test_plt from a copy, whose first word is the pushed return address
 * into f8. The dw backend hands the PLT's CFI to libunwind, which must
 * read the same copy.
 */
static void
test_copy_plt(const char *be, const char *mode, struct jt_unwind *u, struct jt_unwind_ctx *ctx,
	      const struct child *c, uint64_t plt, const uint8_t *copy, size_t len, const uint64_t *pcs, int depth)
{
	struct user_regs_struct regs = c->regs;
	uint8_t *pushed = xmalloc(len + 8);
	uint64_t got[MAX_FRAMES];
	int n, want = depth < MAX_FRAMES ? depth + 1 : MAX_FRAMES;

	memcpy(pushed, &c->regs.rip, 8);
	memcpy(pushed + 8, copy, len);
	regs.rip = plt;
	regs.rsp -= 8;
	unwind_ctx_stack(ctx, regs.rsp, pushed, len + 8);
	n = unwind_stack_ctx(u, ctx, c->tid, &regs, got, MAX_FRAMES);
	ok(n == want && got[0] == plt && memcmp(got + 1, pcs, (size_t) (n - 1) * sizeof(*pcs)) == 0,
	   "%s/%s copy: stopped in the PLT, the entry then the %d real frames (%d frames)", be, mode, depth, n);
	free(pushed);
}

/*
 * The uprobe source's unwind: from a copy of [sp, end of the stack's
 * mapping) taken while the thread was stopped, after the thread has run
 * on. Here the live stack is overwritten with junk (return addresses of a
 * function the chain never calls) once copied, and restored at the end.
 */
static void
test_copy(const struct target *t, const char *be, struct jt_unwind *u, const struct child *c,
	  const struct jt_module *exe, const char *what, const uint64_t *pcs, int depth)
{
	uint64_t sp = c->regs.rsp, junk_ra = exe->bias + sym_addr(t, "thread_main"), got[MAX_FRAMES], slot;
	size_t len = (size_t) (stack_end(c->pid, sp) - sp), i, full_at, slot1[MAX_FRAMES];
	struct jt_unwind_ctx *ctx = unwind_ctx_new();
	uint8_t *copy = xmalloc(len + 8), *junk = xmalloc(len + 8);
	int n, good, held = child_hold_main(c);

	for (i = 0; i + 8 <= len; i += 8)
		memcpy(junk + i, &junk_ra, 8);
	good = held >= 0 && len >= 8 && mem_read(c->tid, sp, copy, len) == 0 && mem_write(c->pid, sp, junk, len) == 0;
	ok(good, "%s/%s/%s copy: %zu bytes of stack copied, then overwritten", be, t->mode, what, len);
	if (!good)
		goto out;
	n = unwind_stack_ctx(u, ctx, c->tid, &c->regs, got, MAX_FRAMES);
	ok(n < 2 || got[1] != pcs[1], "%s/%s/%s copy: the live stack now unwinds otherwise", be, t->mode, what);
	n = copy_unwind(u, ctx, c, copy, len, got);
	ok(same_pcs(pcs, depth, got, n), "%s/%s/%s copy: the copy gives the %d live pcs", be, t->mode, what, depth);
	n = unwind_stack_ctx(u, ctx, c->tid, &c->regs, got, MAX_FRAMES);
	ok(n < 2 || got[1] != pcs[1], "%s/%s/%s copy: cleared after one unwind", be, t->mode, what);
	n = copy_sweep(u, ctx, c, copy, len, pcs, depth, &full_at);
	ok(n == 0, "%s/%s/%s copy: a copy cut short gives a prefix of the live pcs (all %d from %zu bytes)",
	   be, t->mode, what, depth, full_at);
	if (signal_marks(pcs, depth) && len > COPY_SWEEP) {
		n = copy_unwind(u, ctx, c, copy, COPY_SWEEP, got);
		ok(n > 10 && n < depth && signal_marks(got, n) == 1ull << 9,
		   "%s/%s/%s copy: %d bytes hold the signal frame: through it to %d frames, short of sig_main's",
		   be, t->mode, what, COPY_SWEEP, n);
	}
	if (!strcmp(what, "main") && plt_entry(t))
		test_copy_plt(be, t->mode, u, ctx, c, exe->bias + plt_entry(t), copy, len, pcs, depth);
	if (!strcmp(what, "main") && (!strcmp(t->mode, "pie") || !strcmp(t->mode, "static")))
		bench_copy(be, t->mode, u, ctx, c, copy, len, depth);
	copy_slots(copy, len, pcs, depth, slot1);
	if (depth > 3 && slot1[1] != NO_SLOT) {
		slot = sp + slot1[1];
		unwind_ctx_override(ctx, slot, pcs[3]);
		n = copy_unwind(u, ctx, c, copy, len, got);
		ok(n >= 2 && got[1] == pcs[3], "%s/%s/%s copy: an override inside the copy wins", be, t->mode, what);
	}
out:
	/* Say why, should it come back (the main thread's read of a junk thread block was why: child_hold_main). */
	if (good && mem_write(c->pid, sp, copy, len) != 0) {
		int e = errno;

		printf("Bail out! cannot restore the child's stack (%zu bytes at %#llx, process %d, thread %d): %s; "
		       "the process %s\n", len, (unsigned long long)sp, (int)c->pid, (int)c->tid, strerror(e),
		       kill(c->pid, 0) == 0 ? "lives" : "is gone");
	}
	if (held > 0)
		child_release_main(c);
	unwind_ctx_free(ctx);
	free(copy);
	free(junk);
}

/* The chain stopped in what (main, thread, signal): each backend's live unwind, then the same from copies. */
static void
copy_target(const struct target *t, const char *what)
{
	uint64_t pcs[MAX_FRAMES];
	struct child c = { 0 };
	struct jt_modules m;
	struct jt_module *exe;
	struct jt_unwind *u;
	int depth;
	size_t i;

	modules_init(&m);
	if (child_start(t, what, &c) != 0 || modules_refresh(&m, c.pid) <= 0 || !(exe = main_module(&m))) {
		ok(0, "%s/%s: child stopped at the int3", t->mode, what);
		goto out;
	}
	for (i = 0; i < N_BACKENDS; i++) {
		u = unwind_new_backend(&m, backends[i]);
		depth = u ? unwind_stack(u, c.tid, &c.regs, pcs, MAX_FRAMES) : 0;
		ok(depth > 9, "%s/%s/%s: %d live frames", backends[i], t->mode, what, depth);
		if (u && depth > 9)
			test_copy(t, backends[i], u, &c, exe, what, pcs, depth);
		unwind_destroy(u);
	}
out:
	child_kill(&c);
	modules_clear(&m);
}

/* The chain in main, a second thread and a signal handler. */
static void
copy_mode(const struct target *t)
{
	copy_target(t, "main");
	copy_target(t, "thread");
	copy_target(t, "signal");
}

int
main(void)
{
	return child_test_run("jt-unwind-copy", copy_mode);
}
