/* test_unwind_memo.c - a thread's unwind memo (unwind.h): joined where the stack is as it was, never where a word the walk used changed; checked against unwinds without one. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "maps.h"
#include "mem.h"
#include "modules.h"
#include "tap.h"
#include "unwind.h"
#include "unwind_child.h"
#include "util.h"

/* One unwind of the copy from regs, with the memo in *memo (NULL: none); *joined gets the frame it joined at. */
static int
unwind_regs(struct jt_unwind *u, struct jt_unwind_ctx *ctx, const struct child *c, const struct user_regs_struct *regs,
	    const uint8_t *copy, size_t len, struct jt_unwind_memo **memo, uint64_t *pcs, int *joined)
{
	int n;

	unwind_ctx_stack(ctx, c->regs.rsp, copy, len);
	if (memo)
		unwind_ctx_memo(ctx, memo);
	n = unwind_stack_ctx(u, ctx, c->tid, regs, pcs, MAX_FRAMES);
	*joined = unwind_ctx_memo_joined(ctx);
	return n;
}

static int
unwind_copy(struct jt_unwind *u, struct jt_unwind_ctx *ctx, const struct child *c, const uint8_t *copy,
	    size_t len, struct jt_unwind_memo **memo, uint64_t *pcs, int *joined)
{
	return unwind_regs(u, ctx, c, &c->regs, copy, len, memo, pcs, joined);
}

/*
 * Each general register but the stack pointer and pc changed in turn:
 * with a memo of the unchanged registers, the same as without one (a frame
 * whose CFA is kept in a register, f6's, depends on it). Returns the
 * failures; *joins counts the unwinds that joined.
 */
static int
sweep_regs(struct jt_unwind *u, struct jt_unwind_ctx *ctx, struct jt_unwind_ctx *plain, const struct child *c,
	   const uint8_t *copy, size_t len, struct jt_unwind_memo **memo, uint64_t junk, size_t *joins)
{
	static const size_t at[] = {
		offsetof(struct user_regs_struct, rax), offsetof(struct user_regs_struct, rbx),
		offsetof(struct user_regs_struct, rcx), offsetof(struct user_regs_struct, rdx),
		offsetof(struct user_regs_struct, rsi), offsetof(struct user_regs_struct, rdi),
		offsetof(struct user_regs_struct, rbp), offsetof(struct user_regs_struct, r8),
		offsetof(struct user_regs_struct, r9), offsetof(struct user_regs_struct, r10),
		offsetof(struct user_regs_struct, r11), offsetof(struct user_regs_struct, r12),
		offsetof(struct user_regs_struct, r13), offsetof(struct user_regs_struct, r14),
		offsetof(struct user_regs_struct, r15),
	};
	uint64_t got[MAX_FRAMES], want[MAX_FRAMES], w;
	int n, nw, joined, bad = 0;

	for (size_t i = 0; i < ARRAY_SIZE(at); i++)
		for (int v = 0; v < 2; v++) {
			struct user_regs_struct regs = c->regs;

			(void)unwind_copy(u, ctx, c, copy, len, memo, got, &joined);
			memcpy(&w, (char *)&regs + at[i], 8);
			w = v ? w + 0x10 : junk;
			memcpy((char *)&regs + at[i], &w, 8);
			nw = unwind_regs(u, plain, c, &regs, copy, len, NULL, want, &joined);
			n = unwind_regs(u, ctx, c, &regs, copy, len, memo, got, &joined);
			*joins += joined >= 0;
			if (n != nw || memcmp(got, want, (size_t)n * sizeof(*got)) != 0) {
				if (!bad++)
					printf("# register at %zu changed: %d frames with the memo (joined at %d), %d without\n",
					       at[i], n, joined, nw);
			}
		}
	return bad;
}

/*
 * Every word of the copy changed in turn (to a return address of the
 * program, and by a small step): the unwind with a memo of the unchanged
 * stack gives what an unwind without a memo gives, always; it joins the
 * memo where the walk did not use the word, and never where the change
 * changed the frames.
 */
static void
sweep(const char *mode, const char *what, struct jt_unwind *u, const struct child *c, const uint8_t *orig,
      size_t len, const uint64_t *pcs, int depth, uint64_t junk)
{
	struct jt_unwind_ctx *ctx = unwind_ctx_new(), *plain = unwind_ctx_new();
	struct jt_unwind_memo *memo = NULL;
	uint8_t *copy = xmalloc(len);
	uint64_t got[MAX_FRAMES], want[MAX_FRAMES], w;
	size_t at, mattered = 0, mattered_joined = 0, joins = 0, wrong = 0, tries = 0;
	int n, nw, joined;

	memcpy(copy, orig, len);
	for (at = 0; at + 8 <= len; at += 8) {
		memcpy(&w, orig + at, 8);
		for (int v = 0; v < 2; v++) {
			uint64_t nv = v ? w + 0x10 : junk;

			if (nv == w)
				continue;
			/* The memo of the unchanged stack, then the changed one with it and without. */
			(void)unwind_copy(u, ctx, c, orig, len, &memo, got, &joined);
			memcpy(copy + at, &nv, 8);
			nw = unwind_copy(u, plain, c, copy, len, NULL, want, &joined);
			n = unwind_copy(u, ctx, c, copy, len, &memo, got, &joined);
			memcpy(copy + at, &w, 8);
			tries++;
			if (n != nw || memcmp(got, want, (size_t)n * sizeof(*got)) != 0) {
				if (!wrong++)
					printf("# word %zu (%#llx -> %#llx): %d frames with the memo (joined at %d), %d without\n",
					       at / 8, (unsigned long long)w, (unsigned long long)nv, n, joined, nw);
			}
			joins += joined >= 0;
			if (nw != depth || memcmp(want, pcs, (size_t)nw * sizeof(*want)) != 0) {
				mattered++;
				mattered_joined += joined >= 0;
			}
		}
	}
	printf("# %s/%s: %zu changed stacks, %zu joined the memo, %zu changed the frames\n", mode, what, tries,
	       joins, mattered);

	ok(wrong == 0, "%s/%s: with a memo, each of %zu changed stacks unwinds as without one", mode, what, tries);
	ok(joins > tries / 2, "%s/%s: the memo is joined where the change was not used (%zu of %zu)", mode, what,
	   joins, tries);
	ok(mattered >= (size_t)(depth - 2) && mattered_joined == 0,
	   "%s/%s: never joined where the change changed the frames (%zu changes)", mode, what, mattered);
	joins = 0;
	n = sweep_regs(u, ctx, plain, c, orig, len, &memo, junk, &joins);
	ok(n == 0, "%s/%s: with a memo, each of 30 changed registers unwinds as without one (%zu joined)", mode,
	   what, joins);
	unwind_memo_free(memo);
	unwind_ctx_free(ctx);
	unwind_ctx_free(plain);
	free(copy);
}

/* The memo's life on one stopped child: made, joined, kept from a signal frame, dropped with the rules. */
static void
test_child(const struct target *t, const char *what)
{
	struct jt_unwind_memo *memo = NULL;
	struct jt_unwind_ctx *ctx = unwind_ctx_new();
	uint64_t pcs[MAX_FRAMES], got[MAX_FRAMES], len = 0;
	struct child c = { 0 };
	struct jt_modules m;
	struct jt_unwind *u = NULL;
	uint8_t *copy = NULL;
	int n, depth, joined, is_signal = strcmp(what, "signal") == 0;

	modules_init(&m);
	if (child_start(t, what, &c) != 0 || modules_refresh(&m, c.pid) <= 0 || !(u = unwind_new(&m))) {
		ok(0, "%s/%s: child stopped at the int3, its modules read", t->mode, what);
		goto out;
	}
	len = stack_end(c.pid, c.regs.rsp) - c.regs.rsp;
	copy = xmalloc(len);
	if (mem_read(c.tid, c.regs.rsp, copy, len) != 0) {
		ok(0, "%s/%s: its stack copied", t->mode, what);
		goto out;
	}
	depth = unwind_copy(u, ctx, &c, copy, len, NULL, pcs, &joined);
	ok(depth > 9 && joined == -1, "%s/%s: %d frames without a memo", t->mode, what, depth);
	n = unwind_copy(u, ctx, &c, copy, len, &memo, got, &joined);
	ok(n == depth && memcmp(got, pcs, (size_t)n * sizeof(*got)) == 0 && joined == -1,
	   "%s/%s: the first unwind with a memo walks (joined %d)", t->mode, what, joined);
	n = unwind_copy(u, ctx, &c, copy, len, &memo, got, &joined);
	if (is_signal) {
		/* A signal frame's registers come from the frame itself, which the memo does not stand for. */
		ok(n == depth && memcmp(got, pcs, (size_t)n * sizeof(*got)) == 0 && joined == -1,
		   "%s/%s: a walk through a signal frame is not kept (joined %d)", t->mode, what, joined);
		goto out;
	}
	ok(n == depth && memcmp(got, pcs, (size_t)n * sizeof(*got)) == 0 && joined == 0,
	   "%s/%s: the next joins it at frame 0, the same %d frames", t->mode, what, n);
	/* Live, as the ptrace source unwinds: the stack is the copy's. */
	unwind_ctx_memo(ctx, &memo);
	n = unwind_stack_ctx(u, ctx, c.tid, &c.regs, got, MAX_FRAMES);
	ok(n == depth && memcmp(got, pcs, (size_t)n * sizeof(*got)) == 0 && unwind_ctx_memo_joined(ctx) == 0,
	   "%s/%s: a live unwind joins it too", t->mode, what);
	/* A shorter max: the memo's frames up to it. */
	unwind_ctx_stack(ctx, c.regs.rsp, copy, len);
	unwind_ctx_memo(ctx, &memo);
	n = unwind_stack_ctx(u, ctx, c.tid, &c.regs, got, 4);
	ok(n == 4 && memcmp(got, pcs, 4 * sizeof(*got)) == 0, "%s/%s: max 4 gives the first 4 frames", t->mode,
	   what);
	n = unwind_copy(u, ctx, &c, copy, len, &memo, got, &joined);
	ok(n == depth && memcmp(got, pcs, (size_t)n * sizeof(*got)) == 0,
	   "%s/%s: and the next unwind all %d again (joined %d)", t->mode, what, n, joined);
	/* Another unwinder (an exec's image): the memo is of other rules. */
	{
		struct jt_unwind *u2 = unwind_new(&m);

		n = unwind_copy(u2, ctx, &c, copy, len, &memo, got, &joined);
		ok(n == depth && joined == -1, "%s/%s: another unwinder walks (joined %d)", t->mode, what, joined);
		unwind_destroy(u2);
	}
	sweep(t->mode, what, u, &c, copy, len, pcs, depth, pcs[depth - 1]);
out:
	unwind_memo_free(memo);
	unwind_ctx_free(ctx);
	unwind_destroy(u);
	free(copy);
	child_kill(&c);
	modules_clear(&m);
}

int
main(void)
{
	struct target targets[] = { TARGET_PIE, TARGET_STATIC };
	static const char *const whats[] = { "main", "thread", "signal" };
	char dir[PATH_MAX], src[PATH_MAX];
	size_t i, k;

	if (child_test_begin(src, dir, "jt-unwind-memo") != 0)
		return tap_done();
	for (i = 0; i < ARRAY_SIZE(targets); i++) {
		int good = build_target(&targets[i], dir, src) == 0;

		ok(good, "built %s target", targets[i].mode);
		for (k = 0; good && k < ARRAY_SIZE(whats); k++)
			test_child(&targets[i], whats[k]);
	}
	child_test_end(dir);
	return tap_done();
}
