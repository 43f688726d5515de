/* unwind_dw_memo.c - the default unwinder's memo of a thread's last walk: its frames and what they depended on, so that the next walk joins it where nothing it used has changed. */
#include <stdlib.h>
#include <string.h>

#include "unwind.h"
#include "unwind_backend.h"
#include "unwind_dw.h"
#include "util.h"

/*
 * Joins one unwind tries. A frame that matches but fails the check (a
 * return address above it changed) most likely fails again higher up, for
 * the same word; stepping on costs less than checking every frame.
 */
#define UD_MEMO_TRIES 2

/* Bits of ud_step_log.read_ok and of a step's needed reads. */
#define UD_READ_CFA	1u
#define UD_READ_SAVED(i) (2u << (i))

/* A unique epoch for every set of rules (uw_dw.epoch): a memo of other rules, or another process's, never matches. */
static uint64_t ud_epochs;

uint64_t
ud_memo_epoch(void)
{
	return __atomic_add_fetch(&ud_epochs, 1, __ATOMIC_RELAXED);
}

static void
ud_memo_clear(struct jt_unwind_memo *m)
{
	free(m->f);
	free(m->lval);
	free(m->rd);
	memset(m, 0, sizeof(*m));
}

void
unwind_memo_free(struct jt_unwind_memo *m)
{
	if (!m)
		return;
	ud_memo_clear(m);
	free(m);
}

void
ud_memo_ctx_free(struct ud_ctx *c)
{
	ud_memo_clear(&c->spare);
	free(c->log);
	c->log = NULL;
	c->log_cap = 0;
}

void
ud_memo_begin(struct ud_ctx *c, struct uw_dw *u)
{
	const struct jt_unwind_memo *m = c->slot ? *c->slot : NULL;

	c->memo = m && m->epoch == u->epoch && m->nstep > 0 ? m : NULL;
	c->cursor = 0;
	c->tries = 0;
	c->log_bad = 0;
	if (c->slot)
		__atomic_add_fetch(&u->n_walks, 1, __ATOMIC_RELAXED);
}

/* v with room for need elements of size bytes, its capacity *cap doubled as needed. */
static void *
ud_grow(void *v, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return v;
	*cap = *cap ? *cap : 16;
	while (*cap < need)
		*cap *= 2;
	return xrealloc(v, *cap * size);
}

struct ud_step_log *
ud_memo_log(struct ud_ctx *c, int k)
{
	if (!c->slot)
		return NULL;
	c->log = ud_grow(c->log, &c->log_cap, (size_t) k + 1, sizeof(*c->log));
	return &c->log[k];
}

/*
 * Whether the walk from memo frame k on would go as it went, from a frame
 * with its pc and stack pointer and registers rs: the registers it used
 * hold what they held, and the words it used read as they read. A failed
 * read here is no cut of the stack copy (the walk itself says that).
 */
static int
ud_memo_holds(struct ud_ctx *c, const struct jt_unwind_memo *m, int k, const struct ud_regs *rs)
{
	const struct ud_memo_frame *f = &m->f[k];
	const uint64_t *v = m->lval + f->lv;
	int ended = c->ctx->copy_ended, ok = 1;
	uint64_t w;
	uint32_t b;
	size_t i;

	if ((rs->known & f->live) != f->known)
		return 0;
	for (b = f->known; b; b &= b - 1)
		if (rs->r[__builtin_ctz(b)] != *v++)
			return 0;
	for (i = f->rd; ok && i < m->nrd; i++)
		ok = ud_read_word(c, m->rd[i].addr, &w) == 0 && w == m->rd[i].val;
	c->ctx->copy_ended = ended;
	return ok;
}

int
ud_memo_join(struct ud_ctx *c, struct uw_dw *u, const struct ud_regs *rs, int exact, int j, uint64_t *pcs,
	     int max)
{
	const struct jt_unwind_memo *m = c->memo;
	const struct ud_memo_frame *f;
	int k, n, i;

	/* Frames go up the stack: both walks' stack pointers rise. */
	while (c->cursor < m->nstep && m->f[c->cursor].sp < rs->r[UD_SP])
		c->cursor++;
	k = c->cursor;
	if (k == m->nstep || c->tries == UD_MEMO_TRIES)
		return -1;
	f = &m->f[k];
	/* Frame 0's pc, alone, is looked up as it is, not as a return address. */
	if (f->sp != rs->r[UD_SP] || f->pc != rs->r[UD_RA] || (k == 0) != (exact != 0))
		return -1;
	n = j + (m->n - k);
	if (n < max && m->nstep < m->n)		/* the memo's walk stopped at its max, short of this one's */
		return -1;
	c->tries++;
	if (!ud_memo_holds(c, m, k, rs))
		return -1;
	if (n > max)
		n = max;
	for (i = j + 1; i < n; i++)
		pcs[i] = m->f[k + i - j].pc;
	c->ctx->memo_joined = k;
	__atomic_add_fetch(&u->n_memo, 1, __ATOMIC_RELAXED);
	return n;
}

/*
 * The registers a step's result (the registers of the caller in out)
 * depended on, and in *reads the words it read that it depended on. The
 * CFA always counts: the caller's stack pointer, and the check that it
 * goes up.
 */
static uint32_t
ud_step_uses(const struct ud_step_log *s, uint32_t out, uint32_t *reads)
{
	const struct ud_rule *r = &s->rule;
	uint32_t in = 1u << UD_SP;
	int i;

	*reads = 0;
	if (r->kind != UD_CFI)
		return 0;	/* UD_STOP: the pc alone said so */
	if (r->cfa_base < UD_NREGS)
		in |= 1u << r->cfa_base;
	*reads |= UD_READ_CFA;
	for (i = 0; s->saved && i < UD_NSAVED; i++) {
		int reg = arch_dwarf_saved[i];

		if (!(out & (1u << reg)))
			continue;
		if (r->how[i] == UD_SAME)
			in |= 1u << reg;
		else if (r->how[i] != UD_UNDEF && r->base[i] < UD_NREGS)
			in |= 1u << r->base[i];
		*reads |= UD_READ_SAVED(i);
	}
	*reads &= s->read_ok;
	return in;
}

/* Appends a frame to m; its values and reads are appended after it. */
static struct ud_memo_frame *
ud_memo_frame_add(struct jt_unwind_memo *m)
{
	struct ud_memo_frame *f;

	m->f = ud_grow(m->f, &m->cap_f, (size_t) m->n + 1, sizeof(*m->f));
	f = &m->f[m->n++];
	memset(f, 0, sizeof(*f));
	f->lv = (uint32_t) m->nlval;
	f->rd = (uint32_t) m->nrd;
	return f;
}

static void
ud_memo_read_add(struct jt_unwind_memo *m, uint64_t addr, uint64_t val)
{
	m->rd = ud_grow(m->rd, &m->cap_rd, m->nrd + 1, sizeof(*m->rd));
	m->rd[m->nrd++] = (struct ud_memo_read) { addr, val };
}

/* Appends the logged step s as a frame of pc, with the registers and reads it needed. */
static void
ud_memo_step_add(struct jt_unwind_memo *m, const struct ud_step_log *s, uint64_t pc)
{
	uint32_t live = s->live, reads = s->reads;
	struct ud_memo_frame *f = ud_memo_frame_add(m);
	uint32_t b;
	int i;

	f->pc = pc;
	f->sp = s->in.r[UD_SP];
	f->live = live;
	f->known = live & s->in.known;
	m->lval = ud_grow(m->lval, &m->cap_lval, m->nlval + UD_NREGS, sizeof(*m->lval));
	for (b = f->known; b; b &= b - 1)
		m->lval[m->nlval++] = s->in.r[__builtin_ctz(b)];
	if (reads & UD_READ_CFA)
		ud_memo_read_add(m, s->cfa_addr, s->cfa_val);
	for (i = 0; i < UD_NSAVED; i++)
		if (reads & UD_READ_SAVED(i))
			ud_memo_read_add(m, s->addr[i], s->val[i]);
}

/* Appends old's frames from k on to m. */
static void
ud_memo_tail_add(struct jt_unwind_memo *m, const struct jt_unwind_memo *old, int k)
{
	size_t lv0 = old->f[k].lv, rd0 = old->f[k].rd;
	int i;

	m->lval = ud_grow(m->lval, &m->cap_lval, m->nlval + old->nlval - lv0, sizeof(*m->lval));
	m->rd = ud_grow(m->rd, &m->cap_rd, m->nrd + old->nrd - rd0, sizeof(*m->rd));
	m->f = ud_grow(m->f, &m->cap_f, (size_t) (m->n + old->n - k), sizeof(*m->f));
	for (i = k; i < old->n; i++) {
		struct ud_memo_frame *f = &m->f[m->n++];

		*f = old->f[i];
		f->lv = (uint32_t) (m->nlval + f->lv - lv0);
		f->rd = (uint32_t) (m->nrd + f->rd - rd0);
	}
	memcpy(m->lval + m->nlval, old->lval + lv0, (old->nlval - lv0) * sizeof(*m->lval));
	memcpy(m->rd + m->nrd, old->rd + rd0, (old->nrd - rd0) * sizeof(*m->rd));
	m->nlval += old->nlval - lv0;
	m->nrd += old->nrd - rd0;
	m->nstep += old->nstep - k;
}

void
ud_memo_end(struct ud_ctx *c, struct uw_dw *u, int nstep, int n, const uint64_t *pcs, int joined)
{
	const struct jt_unwind_memo *old = c->memo;
	struct jt_unwind_memo *m = &c->spare, swap;
	struct ud_step_log *s;
	uint32_t need;
	int i;

	/* A walk that went through a signal frame or failed a read is not kept; nor one that only joined. */
	if (!c->slot || c->log_bad || nstep == 0)
		return;
	/* Backwards: what each step needed, given what the steps after it needed (a joined frame: its own). */
	need = joined >= 0 ? old->f[joined].live : 0;
	for (i = nstep - 1; i >= 0; i--) {
		s = &c->log[i];
		need = s->live = ud_step_uses(s, need | 1u << UD_RA | 1u << UD_SP, &s->reads);
	}
	m->n = 0;
	m->nlval = m->nrd = 0;
	m->epoch = u->epoch;
	for (i = 0; i < nstep; i++)
		ud_memo_step_add(m, &c->log[i], unwind_pc_addr(pcs[i]));
	m->nstep = nstep;
	if (joined >= 0) {
		ud_memo_tail_add(m, old, joined);
	} else if (nstep < n) {		/* max ended the walk: its last frame was never stepped from */
		ud_memo_frame_add(m)->pc = pcs[nstep];
	}
	if (!*c->slot)
		*c->slot = xcalloc(1, sizeof(**c->slot));
	swap = **c->slot;
	**c->slot = *m;
	*m = swap;
}
