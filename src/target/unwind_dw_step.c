/* unwind_dw_step.c - the default unwinder's walk: one window of stack per unwind, stepped frame by frame by the shared rules, or joined to its thread's last walk. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mem.h"
#include "modules.h"
#include "unwind_backend.h"
#include "unwind_dw.h"
#include "util.h"

#define UD_PAGE		4096u
/*
 * A remote read costs about 2 us, plus 0.4 us a page. Reading four pages
 * more is cheaper than a second read, but a frame of a megabyte is not.
 */
#define UD_SPAN_MIN	1024u		/* least stack an unwind is predicted to read */
#define UD_SPAN_MAX	(16u * 1024)	/* most, and how far from the stack pointer the prediction looks */
#define UD_WIN_CAP	(UD_SPAN_MAX + UD_PAGE)	/* bytes one window of stack can hold */
#define UD_MARGIN	256u		/* read this far below the first missed slot of a frame */

/* ---- target memory: one window of stack, the overrides, and mem_read for the rest ---- */

/* Reads up to len bytes at addr with one system call; returns how many it got from the start. */
static size_t
ud_fetch(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *) (uintptr_t) addr, len };
	ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);

	if (n >= 0)
		return (size_t) n;
	if (errno == EFAULT || errno == ESRCH)
		return 0;
	/* Refused (seccomp, an old kernel): mem_read's /proc/PID/mem, up to the end of the page. */
	if (len > UD_PAGE - (addr & (UD_PAGE - 1)))
		len = UD_PAGE - (addr & (UD_PAGE - 1));
	return mem_read(tid, addr, buf, len) == 0 ? len : 0;
}

/*
 * Fills the window from start to the end of the page that holds the
 * predicted span. With a stack copy it stays empty and ends there: ud_read
 * serves the copy instead, and the live stack has moved on.
 */
static void
ud_window_fill(struct ud_ctx *c, uint64_t start)
{
	struct ud_window *w = &c->w;
	size_t want = (size_t) (((start + w->span) | (UD_PAGE - 1)) + 1 - start);

	if (c->ctx->stack.set) {
		w->base = start;
		w->len = 0;
		w->end = 1;
		return;
	}
	if (want > UD_WIN_CAP)
		want = UD_WIN_CAP;
	w->base = start;
	w->len = ud_fetch(c->tid, start, w->buf, want);
	w->end = w->len < want;
}

/* Whether [addr, addr + len) lies in the window. */
static int
ud_window_has(const struct ud_window *w, uint64_t addr, size_t len)
{
	return addr >= w->base && addr - w->base <= w->len && len <= w->len - (addr - w->base);
}

/*
 * Learns how much stack to read next time from how much of the first
 * UD_SPAN_MAX bytes this unwind read. The deepest recent unwind wins and
 * is forgotten slowly, as a page too many costs less than a second read.
 */
static void
ud_window_learn(struct ud_window *w)
{
	size_t used = (size_t) (w->top - w->sp0);
	size_t decayed = w->span - w->span / 16;

	w->span = used > decayed ? used : decayed;
	if (w->span < UD_SPAN_MIN)
		w->span = UD_SPAN_MIN;
}

/*
 * Copies len target bytes at addr, as jmptrace's overrides say they read.
 * A miss above the window, in a frame that is deeper than predicted,
 * refills it from just below the missed slot; anything else (another
 * stack, a global) is one mem_read, or with a stack copy the copy or a
 * module's bytes. Returns 0, or -1 when unreadable.
 */
int
ud_read(struct ud_ctx *c, uint64_t addr, void *out, size_t len)
{
	struct ud_window *w = &c->w;
	const struct uw_overrides *ov = &c->ctx->ov;
	uint64_t start;
	int i, rc;

	if (!ud_window_has(w, addr, len) && !w->end && addr >= w->base + w->len) {
		start = addr > c->floor + UD_MARGIN ? (addr - UD_MARGIN) & ~(uint64_t) 7 : c->floor;
		ud_window_fill(c, start);
	}
	if (ud_window_has(w, addr, len)) {
		memcpy(out, w->buf + (addr - w->base), len);
		if (addr + len > w->top && addr + len - w->sp0 <= UD_SPAN_MAX)
			w->top = addr + len;
	} else if (c->ctx->stack.set && (rc = uw_stack_read(c->ctx, c->mods, addr, out, len)) <= 0) {
		if (rc < 0)
			return -1;
	} else if (mem_read(c->tid, addr, out, len) != 0) {
		return -1;
	}
	for (i = 0; i < ov->n; i++)
		if (ov->addr[i] >= addr && ov->addr[i] - addr + 8 <= len)
			memcpy((uint8_t *) out + (ov->addr[i] - addr), &ov->value[i], 8);
	return 0;
}

/* ---- stepping ---- */

/*
 * Computes base + off, or the word there (its address in *at); base is a
 * register of rs or UD_CFA. Returns 0, -1 for an unknown base, or -2 when
 * the word cannot be read.
 */
static int
ud_eval(struct ud_ctx *c, const struct ud_regs *rs, uint64_t cfa, int how, int base, int32_t off,
	uint64_t *out, uint64_t *at)
{
	uint64_t a;

	if (base == UD_CFA)
		a = cfa;
	else if (rs->known & (1u << base))
		a = rs->r[base];
	else
		return -1;
	a += (uint64_t) (int64_t) off;
	if (how == UD_VAL) {
		*out = a;
		return 0;
	}
	*at = a;
	return ud_read_word(c, a, out) == 0 ? 0 : -2;
}

/*
 * Moves rs to the caller's registers by rule r, in place (it runs for every
 * frame). Returns 1, or 0 at the end of the stack: no return address, or a
 * CFA that does not go up (a corrupt stack would otherwise loop). With lg,
 * logs the step for the memo.
 */
static int
ud_step_cfi(struct ud_ctx *c, const struct ud_rule *r, struct ud_regs *rs, struct ud_step_log *lg)
{
	uint64_t cfa = 0, v[UD_NSAVED] = { 0 }, at[UD_NSAVED] = { 0 }, cfa_at = 0;
	uint32_t known = 0;
	int i, reg, rc;

	if (lg) {
		lg->in = *rs;
		lg->rule = *r;
		lg->read_ok = 0;
		lg->saved = 0;
	}
	rc = ud_eval(c, rs, 0, r->cfa_how, r->cfa_base, r->cfa_off, &cfa, &cfa_at);
	if (lg) {
		lg->cfa_addr = cfa_at;
		lg->cfa_val = cfa;
		lg->read_ok |= rc == 0 && r->cfa_how == UD_AT;
		c->log_bad |= rc == -2;
	}
	if (rc != 0 || cfa <= rs->r[UD_SP])
		return 0;
	for (i = 0; i < UD_NSAVED; i++) {
		reg = arch_dwarf_saved[i];
		if (r->how[i] == UD_SAME) {
			v[i] = rs->r[reg];
			known |= rs->known & (1u << reg);
		} else if (r->how[i] != UD_UNDEF) {
			rc = ud_eval(c, rs, cfa, r->how[i], r->base[i], r->off[i], &v[i], &at[i]);
			if (rc == 0)
				known |= 1u << reg;
			if (lg) {
				lg->read_ok |= (uint32_t) (rc == 0 && r->how[i] == UD_AT) << (1 + i);
				c->log_bad |= rc == -2;
			}
		}
	}
	if (lg) {
		memcpy(lg->addr, at, sizeof(at));
		memcpy(lg->val, v, sizeof(v));
		lg->saved = 1;
	}
	if (!(known & (1u << UD_RA)))
		return 0;
	for (i = 0; i < UD_NSAVED; i++)
		rs->r[arch_dwarf_saved[i]] = v[i];
	rs->r[UD_SP] = cfa;
	rs->known = known | 1u << UD_SP;
	return 1;
}

/* ud_read_word for uw_trampoline_exit, which takes the ctx as a void pointer. */
static int
ud_tramp_read(void *arg, uint64_t addr, uint64_t *v)
{
	return ud_read_word(arg, addr, v);
}

/*
 * Steps over the sigreturn trampoline. When a handler returns into it, the
 * stack pointer points into the kernel's signal frame, which holds every
 * register of the interrupted code (dwarf_regs.h says where). A handler on
 * a sigaltstack interrupted code on another stack, which then gets a
 * window of its own.
 */

static int
ud_step_signal(struct ud_ctx *c, struct ud_regs *rs)
{
	uint8_t block[ARCH_SIGFRAME_LEN];
	uint64_t ret, sp;

	if (ud_read(c, rs->r[UD_SP] + ARCH_SIGFRAME_OFF, block, sizeof(block)) != 0)
		return 0;
	arch_sigframe_regs(block, rs->r);
	rs->known = (1u << UD_NREGS) - 1;
	/* Interrupted in the kernel's uretprobe trampoline: on from the return it was making (unwind.h). */
	if (uw_trampoline_exit(c->ctx, rs->r[UD_RA], rs->r[UD_SP], ud_tramp_read, c, &ret, &sp)) {
		rs->r[UD_RA] = ret;
		rs->r[UD_SP] = sp;
	}
	if (!ud_window_has(&c->w, rs->r[UD_SP], 8))
		ud_window_fill(c, rs->r[UD_SP]);
	return 1;
}

/* Hands the whole unwind to libunwind, for CFI we do not evaluate; ctx carries the overrides. */
static int
ud_stack_slow(struct uw_dw *u, struct jt_unwind_ctx *ctx, pid_t tid, const arch_regs *regs, uint64_t *pcs,
	      int max)
{
	void *slow = __atomic_load_n(&u->slow, __ATOMIC_ACQUIRE);

	if (!slow) {
		pthread_rwlock_wrlock(&u->lock);
		if (!u->slow)
			__atomic_store_n(&u->slow, uw_backend_libunwind.new(u->mods), __ATOMIC_RELEASE);
		slow = u->slow;
		pthread_rwlock_unlock(&u->lock);
		if (!slow)
			return 1;	/* pcs[0] is set */
	}
	__atomic_add_fetch(&u->n_slow, 1, __ATOMIC_RELAXED);
	return uw_backend_libunwind.stack(slow, ctx, tid, regs, pcs, max);
}

/*
 * Walks the frames above frame 0 into pcs[1..max-1]; returns the count, or
 * -1 to go slow. Each frame is first offered to the thread's memo.
 */
static int
ud_walk(struct uw_dw *u, struct ud_ctx *c, struct ud_regs *rs, uint64_t *pcs, int max)
{
	struct ud_step_log *lg;
	struct ud_rule r;
	int n = 1, exact = 1, rc = 1, nstep = 0, joined;

	ud_memo_begin(c, u);
	while (n < max && rc > 0) {
		c->floor = rs->r[UD_SP];
		if (c->memo && (joined = ud_memo_join(c, u, rs, exact, n - 1, pcs, max)) >= 0) {
			ud_memo_end(c, u, nstep, joined, pcs, c->ctx->memo_joined);
			return joined;
		}
		/* A return address is looked up in its call, an interrupted pc as it is. */
		ud_rule_get(u, c->tid, rs->r[UD_RA] - !exact, rs->r[UD_RA], &r);
		if (r.kind == UD_SLOW)
			return -1;
		lg = ud_memo_log(c, nstep++);
		exact = r.kind == UD_SIGNAL;
		if (exact) {	/* this frame is the trampoline; the next is the interrupted pc */
			pcs[n - 1] |= UNWIND_PC_SIGNAL;
			c->log_bad = 1;
		}
		if (r.kind == UD_CFI) {
			rc = ud_step_cfi(c, &r, rs, lg);
		} else {
			if (lg) {
				lg->in = *rs;
				lg->rule = r;
				lg->read_ok = 0;
				lg->saved = 0;
			}
			rc = exact ? ud_step_signal(c, rs) : 0;
		}
		if (rc > 0 && rs->r[UD_RA] != 0)
			pcs[n++] = rs->r[UD_RA];
		else
			rc = 0;
	}
	ud_memo_end(c, u, nstep, n, pcs, -1);
	return n;
}

static int
ud_stack(void *state, struct jt_unwind_ctx *ctx, pid_t tid, const arch_regs *regs, uint64_t *pcs, int max)
{
	struct uw_dw *u = state;
	struct ud_ctx *c = uw_ctx_scratch(ctx, &uw_backend_dw);
	struct ud_regs rs;
	int i, n;

	if (max < 1)
		return -1;
	c->ctx = ctx;
	c->mods = u->mods;
	c->tid = tid;
	c->slot = ctx->memo;
	for (i = 0; i < UD_NREGS; i++)
		rs.r[i] = arch_dwarf_reg(regs, i);
	rs.known = (1u << UD_NREGS) - 1;
	c->floor = c->w.sp0 = c->w.top = arch_sp(regs);
	ud_window_fill(c, arch_sp(regs));
	pcs[0] = arch_pc(regs);
	ud_begin(u);
	n = ud_walk(u, c, &rs, pcs, max);
	ud_end(u);
	if (n < 0)
		n = ud_stack_slow(u, ctx, tid, regs, pcs, max);
	if (!ctx->stack.set)	/* an unwind from a copy read no window to learn from */
		ud_window_learn(&c->w);
	return n;
}

/* ---- the backend ---- */

static void *
ud_ctx_new(void)
{
	struct ud_ctx *c = xcalloc(1, sizeof(*c));

	c->w.buf = xmalloc(UD_WIN_CAP);
	c->w.span = UD_SPAN_MIN;
	return c;
}

static void
ud_ctx_free(void *scratch)
{
	struct ud_ctx *c = scratch;

	ud_memo_ctx_free(c);
	free(c->w.buf);
	free(c);
}

const struct uw_backend uw_backend_dw = {
	.name = "dw",
	.id = UW_BACKEND_DW,
	.new = ud_new,
	.destroy = ud_destroy,
	.ctx_new = ud_ctx_new,
	.ctx_free = ud_ctx_free,
	.stack = ud_stack,
};
