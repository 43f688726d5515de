/* unwind_dw.h - the dw backend's rules, the state its unwinds share, and one unwind's scratch; private to unwind_dw.c (rules), unwind_dw_step.c (stepping) and unwind_dw_memo.c (a thread's last walk). */
#ifndef JT_UNWIND_DW_H
#define JT_UNWIND_DW_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <gelf.h>
#include <elfutils/libdw.h>

#include "dwarf_regs.h"
#include "unwind_backend.h"

struct jt_modules;
struct jt_unwind_ctx;

#define UD_NREGS	ARCH_DWARF_NREGS	/* the registers tracked; the last is the return address */
#define UD_SP		ARCH_DWARF_SP
#define UD_RA		ARCH_DWARF_RA
#define UD_CFA		UD_NREGS	/* as the base of a rule: the frame's CFA */
#define UD_NSAVED	ARCH_DWARF_NSAVED

enum ud_kind {
	UD_EMPTY,	/* a free slot of the rule table */
	UD_CFI,		/* the CFA and saved registers as compiled below */
	UD_SIGNAL,	/* the sigreturn trampoline: registers come from the signal frame */
	UD_STOP,	/* no caller: no module, no CFI, or an undefined CFA */
	UD_SLOW,	/* CFI we do not evaluate: the whole unwind goes to libunwind */
};

enum ud_how {
	UD_UNDEF,	/* cannot be recovered */
	UD_SAME,	/* as in the callee */
	UD_AT,		/* the word at base + off */
	UD_VAL,		/* base + off itself */
};

/* How to get from a frame to its caller, for one pc; 64 bytes. */
struct ud_rule {
	uint64_t pc;			/* the lookup address, the key */
	uint8_t kind;
	uint8_t cfa_how, cfa_base;	/* UD_AT or UD_VAL of a register */
	uint8_t how[UD_NSAVED], base[UD_NSAVED];	/* for arch_dwarf_saved[i]; base may be UD_CFA */
	int32_t cfa_off;
	int32_t off[UD_NSAVED];
};

/* The CFI of one module, opened at its first rule miss. */
struct ud_mod {
	char *path;		/* NULL: not opened */
	uint64_t start, bias;	/* with path: whether a changed module set still has it */
	Elf *elf;
	Dwarf_CFI *eh;		/* .eh_frame */
	Dwarf *dw;		/* owns dbg; opened only when .eh_frame has no answer */
	Dwarf_CFI *dbg;		/* .debug_frame */
	int dbg_tried;
};

/*
 * What every unwind of one process shares. Unwinds hold lock for reading
 * while they look rules up; a miss, which opens CFI with libdw (not safe
 * for concurrent use) and inserts a rule, holds it for writing, as does
 * catching up with a changed module set.
 */
struct uw_dw {
	struct jt_modules *mods;
	uint64_t mods_generation;	/* of mods when m[] and rules[] were last valid */
	struct ud_mod *m;		/* parallel to mods->v */
	size_t nm;
	struct ud_rule *rules;		/* open addressing, 1 << rule_bits slots */
	unsigned int rule_bits;
	size_t nrules;
	pthread_rwlock_t lock;
	pid_t tid;			/* the thread whose unwind builds a rule, under lock */

	uint64_t epoch;			/* changes with the rules (ud_mods_sync), unique among all uw_dw */

	void *slow;			/* the libunwind backend, made at the first UD_SLOW rule; atomic */
	unsigned long n_slow;		/* unwinds handed to it; atomic */
	unsigned long n_memo, n_walks;	/* unwinds that joined their memo, and those given one; atomic */
};

/* The stack bytes of one unwind: [base, base + len) of the thread. */
struct ud_window {
	uint64_t base;
	size_t len;
	int end;		/* the read stopped short: base + len is not readable */
	uint64_t sp0, top;	/* frame 0's stack pointer; the end of what was read up to UD_SPAN_MAX above it */
	size_t span;		/* predicted bytes above sp0 an unwind reads */
	uint8_t *buf;		/* UD_WIN_CAP bytes */
};

/* One frame's registers in DWARF numbering; r[UD_RA] is the frame's pc. */
struct ud_regs {
	uint64_t r[UD_NREGS];
	uint32_t known;		/* bit n: r[n] holds the value */
};

/* One step of a walk, as the memo needs it: the frame it started from, its rule, the words it read. */
struct ud_step_log {
	struct ud_regs in;
	struct ud_rule rule;		/* kind UD_STOP: no step (no caller) */
	uint64_t cfa_addr, cfa_val;	/* the CFA's word, where read_ok's bit 0 says it was read */
	uint64_t addr[UD_NSAVED], val[UD_NSAVED];	/* saved register i's, where bit 1 + i says so */
	uint32_t read_ok;
	int saved;			/* the saved registers were evaluated: the CFA went up */
	uint32_t live, reads;		/* what the walk from here on depended on (ud_memo_end) */
};

/* One frame of a memo. */
struct ud_memo_frame {
	uint64_t pc, sp;	/* its pc (a return address but for frame 0) and stack pointer */
	uint32_t live;		/* the registers the walk from here on depended on (bits) */
	uint32_t known;		/* which of them were known */
	uint32_t lv;		/* the known ones' values: lval[lv..], lowest register first */
	uint32_t rd;		/* the words read from here on that the walk depended on: rd[rd..] */
};

struct ud_memo_read {
	uint64_t addr, val;
};

/*
 * A thread's last walk (unwind.h's jt_unwind_memo): its frames, and all
 * that its result depended on, so that the next unwind of the thread that
 * reaches one of its frames with the same pc, stack pointer and those
 * registers, and finds those words unchanged, takes the rest as it is.
 */
struct jt_unwind_memo {
	uint64_t epoch;		/* of the rules it was walked with (uw_dw.epoch); 0: none */
	int n;			/* frames, f[0..n-1] */
	int nstep;		/* frames stepped from, which may be joined: n, or n - 1 where max cut the walk */
	struct ud_memo_frame *f;
	uint64_t *lval;
	struct ud_memo_read *rd;
	size_t nlval, nrd;
	size_t cap_f, cap_lval, cap_rd;
};

/* The scratch of one unwind, a jt_unwind_ctx's for this backend. */
struct ud_ctx {
	struct jt_unwind_ctx *ctx;	/* its overrides and stack copy */
	const struct jt_modules *mods;	/* what may be read live beside a stack copy */
	pid_t tid;
	uint64_t floor;			/* stack pointer of the frame being stepped: nothing below is needed */
	struct ud_window w;		/* span is learned across unwinds */

	/* The memo of this unwind's thread (unwind_dw_memo.c), when its caller gave one. */
	struct jt_unwind_memo **slot;	/* where the caller keeps it; NULL: no memo, no log */
	const struct jt_unwind_memo *memo;	/* *slot, when walked with the current rules */
	int cursor;			/* its first frame not below the frame being stepped */
	int tries;			/* joins tried in this unwind */
	int log_bad;			/* the walk did what a memo cannot stand for: a failed read, a signal frame */
	struct ud_step_log *log;	/* the walk's steps */
	size_t log_cap;
	struct jt_unwind_memo spare;	/* the next memo is built here, then swapped with *slot's */
};

void *ud_new(struct jt_modules *mods);
void ud_destroy(void *state);

/*
 * Starts the rule lookups of one unwind: catches up with a changed module
 * set, then takes u->lock for reading. ud_end releases it.
 */
void ud_begin(struct uw_dw *u);
void ud_end(struct uw_dw *u);

/*
 * Copies into out the rule for lookup address pc, whose frame's code is at
 * code (pc + 1 for a return address), building it for thread tid on a
 * miss. Between ud_begin and ud_end only.
 */
void ud_rule_get(struct uw_dw *u, pid_t tid, uint64_t pc, uint64_t code, struct ud_rule *out);

/*
 * Copies len target bytes at addr, as jmptrace's overrides say they read
 * (unwind_dw_step.c). Returns 0, or -1 when unreadable.
 */
int ud_read(struct ud_ctx *c, uint64_t addr, void *out, size_t len);

/*
 * ud_read of one word: the stack copy's words read in place when no
 * override is set (an unwind reads a few dozen, and a memo's check only
 * those), else ud_read.
 */
static inline int
ud_read_word(struct ud_ctx *c, uint64_t addr, uint64_t *out)
{
	const struct uw_stack_copy *s = &c->ctx->stack;

	if (!c->ctx->ov.n && uw_stack_holds(s, addr, sizeof(*out))) {
		memcpy(out, s->data + (addr - s->base), sizeof(*out));
		return 0;
	}
	return ud_read(c, addr, out, sizeof(*out));
}

/* ---- the memo (unwind_dw_memo.c) ---- */

/* A new value for uw_dw.epoch, unique in jmptrace's life. */
uint64_t ud_memo_epoch(void);

/* Starts an unwind's use of its thread's memo (c->slot), under ud_begin. */
void ud_memo_begin(struct ud_ctx *c, struct uw_dw *u);

/* The log slot of step k of the walk (grown as needed), or NULL when nothing is logged. */
struct ud_step_log *ud_memo_log(struct ud_ctx *c, int k);

/*
 * At frame j of the walk (registers rs; exact: its pc is no return
 * address), takes the rest of the walk from the memo when a frame of it
 * matches: stores pcs[j + 1 ..] and returns the walk's frame count, or -1.
 */
int ud_memo_join(struct ud_ctx *c, struct uw_dw *u, const struct ud_regs *rs, int exact, int j, uint64_t *pcs,
		 int max);

/*
 * Ends the walk: nstep steps were logged, pcs holds n frames; joined is the
 * memo frame the walk joined at after them, or -1. Keeps the walk as the
 * thread's memo where the log stands for it.
 */
void ud_memo_end(struct ud_ctx *c, struct uw_dw *u, int nstep, int n, const uint64_t *pcs, int joined);

/* Frees a ctx's memo scratch. */
void ud_memo_ctx_free(struct ud_ctx *c);

#endif
