/* unwind_dw.h - the dw backend's rules and the state its unwinds share; private to unwind_dw.c (rules) and unwind_dw_step.c (stepping). */
#ifndef JT_UNWIND_DW_H
#define JT_UNWIND_DW_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <gelf.h>
#include <elfutils/libdw.h>

#include "dwarf_regs.h"

struct jt_modules;

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

	void *slow;			/* the libunwind backend, made at the first UD_SLOW rule; atomic */
	unsigned long n_slow;		/* unwinds handed to it; atomic */
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

#endif
