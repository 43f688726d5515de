/* unwind_dw.c - the default unwinder's rules: libdw CFI compiled into small per-pc rules, in a table every unwind of a process shares. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "mem.h"
#include "modules.h"
#include "plt.h"
#include "unwind_backend.h"
#include "unwind_dw.h"
#include "util.h"

#define UD_RULE_BITS_MIN 10
#define UD_RULE_BITS_MAX 16		/* 64k rules, 4 MiB; a full table starts over */

/* ---- modules and their CFI ---- */

/* Closes what ud_mod_open opened (each of these takes NULL). */
static void
ud_mod_close(struct ud_mod *m)
{
	dwarf_end(m->dw);
	dwarf_cfi_end(m->eh);
	elf_end(m->elf);
	free(m->path);
	memset(m, 0, sizeof(*m));
}

/* Takes a reference to mod's file and opens its .eh_frame; m stays named but empty when it cannot. */
static void
ud_mod_open(struct uw_dw *u, struct ud_mod *m, const struct jt_module *mod)
{
	m->path = xstrdup(mod->path);
	m->start = mod->start;
	m->bias = mod->bias;
	/* Our own reference: the CFI outlives a module that a dlclose drops until ud_mods_sync. */
	m->elf = module_elf(mod) ? elf_begin(-1, ELF_C_READ_MMAP, module_elf(mod)) : NULL;
	if (m->elf)
		m->eh = dwarf_getcfi_elf(m->elf);
	debug_msg("unwind: %s: %s", mod->path, m->eh ? ".eh_frame" : "no .eh_frame");
}

/* The CFI row for the link-time address addr, from .eh_frame, else .debug_frame; 0 or -1. */
static int
ud_mod_frame(struct ud_mod *m, Dwarf_Addr addr, Dwarf_Frame **f)
{
	if (m->eh && dwarf_cfi_addrframe(m->eh, addr, f) == 0)
		return 0;
	if (!m->dbg_tried && m->elf) {
		m->dbg_tried = 1;
		m->dw = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
		m->dbg = m->dw ? dwarf_getcfi(m->dw) : NULL;
	}
	return m->dbg ? dwarf_cfi_addrframe(m->dbg, addr, f) : -1;
}

/* Index in mods->v of the module holding addr, or -1. */
static long
ud_mod_index(const struct jt_modules *ms, uint64_t addr)
{
	size_t lo = 0, hi = ms->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ms->v[mid]->start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < ms->v[lo - 1]->end ? (long) lo - 1 : -1;
}

static void
ud_rules_reset(struct uw_dw *u, unsigned int bits)
{
	free(u->rules);
	u->rules = xcalloc((size_t) 1 << bits, sizeof(*u->rules));
	u->rule_bits = bits;
	u->nrules = 0;
}

/*
 * Realigns m[] with a changed module set. A dlopen shifts positions, so
 * the CFI of a module still mapped at the same place moves with it (both
 * arrays are sorted by start); the others are closed. Every rule goes:
 * any pc may now be other code.
 */
static void
ud_mods_sync(struct uw_dw *u)
{
	struct ud_mod *old = u->m;
	const struct jt_module *mod;
	size_t i, k = 0;

	/* Closing a module ends our reference to an Elf the libunwind backend may be reading. */
	pthread_mutex_lock(&u->mods->elf_lock);
	u->m = xcalloc(u->mods->n ? u->mods->n : 1, sizeof(*u->m));
	for (i = 0; i < u->mods->n; i++) {
		mod = u->mods->v[i];
		while (k < u->nm && (!old[k].path || old[k].start < mod->start))
			ud_mod_close(&old[k++]);
		if (k < u->nm && old[k].start == mod->start && old[k].bias == mod->bias
		    && strcmp(old[k].path, mod->path) == 0) {
			u->m[i] = old[k];
			memset(&old[k++], 0, sizeof(*old));
		}
	}
	for (; k < u->nm; k++)
		ud_mod_close(&old[k]);
	pthread_mutex_unlock(&u->mods->elf_lock);
	free(old);
	u->nm = u->mods->n;
	__atomic_store_n(&u->mods_generation, u->mods->generation, __ATOMIC_RELEASE);
	ud_rules_reset(u, UD_RULE_BITS_MIN);
	u->epoch = ud_memo_epoch();	/* every memo walked with the old rules is stale */
}

/* ---- compiling CFI into rules ---- */

/* Reads a DW_OP_breg<n> or DW_OP_bregx of a register we track into reg and off. */
static int
ud_op_breg(const Dwarf_Op *op, int *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t) op->number;
	} else if (op->atom == DW_OP_bregx && op->number < UD_NREGS) {
		*reg = (int) op->number;
		*off = (int64_t) op->number2;
	} else {
		return 0;
	}
	return *reg < UD_NREGS;
}

/*
 * The CFA: DW_OP_bregx, which libdw makes of DW_CFA_def_cfa, or the
 * expression "breg; deref" that gcc emits for a function that realigns its
 * stack (the CFA is then saved in the frame). Returns -1 for anything else.
 */
static int
ud_compile_cfa(const Dwarf_Op *ops, size_t nops, struct ud_rule *r)
{
	int64_t off;
	int reg;

	if (nops < 1 || nops > 2 || !ud_op_breg(&ops[0], &reg, &off) || off != (int32_t) off)
		return -1;
	if (nops == 2 && ops[1].atom != DW_OP_deref)
		return -1;
	r->cfa_how = nops == 2 ? UD_AT : UD_VAL;
	r->cfa_base = (uint8_t) reg;
	r->cfa_off = (int32_t) off;
	return 0;
}

/*
 * One register's rule, as dwarf_frame_register describes it: no ops for
 * undefined (ops set) or same value (ops NULL); DW_OP_call_frame_cfa with
 * an optional DW_OP_plus_uconst for offset(N); a DW_OP_breg after it for
 * DW_CFA_expression (libdw pushes the CFA first, and the breg hides it);
 * DW_OP_regx for register(R); DW_OP_stack_value at the end for the val_
 * forms. Returns -1 for anything else.
 */
static int
ud_compile_reg(const Dwarf_Op *ops, size_t nops, uint8_t *how, uint8_t *base, int32_t *off)
{
	int64_t o = 0;
	int b = UD_CFA;
	size_t i = 0;

	if (nops == 0) {
		*how = ops ? UD_UNDEF : UD_SAME;
		return 0;
	}
	if (nops == 1 && ops[0].atom == DW_OP_regx) {
		if (ops[0].number >= UD_NREGS)
			return -1;
		*how = UD_VAL;
		*base = (uint8_t) ops[0].number;
		*off = 0;
		return 0;
	}
	if (ops[0].atom == DW_OP_call_frame_cfa)
		i++;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst)
		o = (int64_t) ops[i++].number;
	else if (i < nops && ud_op_breg(&ops[i], &b, &o))
		i++;
	else if (i == 0)
		return -1;
	*how = UD_AT;
	if (i < nops && ops[i].atom == DW_OP_stack_value) {
		*how = UD_VAL;
		i++;
	}
	if (i != nops || o != (int32_t) o)
		return -1;
	*base = (uint8_t) b;
	*off = (int32_t) o;
	return 0;
}

/* Fills r from a CFI row; returns the rule's kind. */
static enum ud_kind
ud_compile(Dwarf_Frame *f, struct ud_rule *r)
{
	Dwarf_Op mem[3], *ops;
	uint8_t how, base;
	int32_t off;
	size_t nops;
	int i;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		return UD_STOP;
	if (ud_compile_cfa(ops, nops, r) != 0)
		return UD_SLOW;
	/* The ABI makes the stack pointer the CFA; a frame that says otherwise is left to libunwind. */
	if (dwarf_frame_register(f, UD_SP, mem, &ops, &nops) != 0
	    || ud_compile_reg(ops, nops, &how, &base, &off) != 0
	    || (how == UD_AT || (how == UD_VAL && (base != UD_CFA || off != 0))))
		return UD_SLOW;
	for (i = 0; i < UD_NSAVED; i++) {
		if (dwarf_frame_register(f, arch_dwarf_saved[i], mem, &ops, &nops) != 0
		    || ud_compile_reg(ops, nops, &r->how[i], &r->base[i], &r->off[i]) != 0)
			return UD_SLOW;
		/*
		 * libdw 0.188's default CFI can leave an untouched callee-saved
		 * register undefined (dwarf_regs.h says which); no compiler marks
		 * one undefined on purpose.
		 */
		if (r->how[i] == UD_UNDEF && arch_dwarf_saved[i] != UD_RA)
			r->how[i] = UD_SAME;
	}
	return UD_CFI;
}

/* Whether the code at addr is the sigreturn trampoline (arch_is_sigreturn). */
static int
ud_is_sigreturn(pid_t tid, uint64_t addr)
{
	uint8_t b[ARCH_SIGRETURN_LEN];

	return mem_read(tid, addr, b, sizeof(b)) == 0 && arch_is_sigreturn(b);
}

/* Whether the code at exact pc addr is a PLT stub's jump (plt_is_stub_jump). */
static int
ud_is_plt_jump(pid_t tid, uint64_t addr)
{
	uint8_t b[PLT_STUB_JUMP_LEN];

	return mem_read(tid, addr, b, sizeof(b)) == 0 && plt_is_stub_jump(b);
}

/*
 * The rule of a function's first instruction: the CFA just above the
 * return address at the stack pointer, the registers the caller keeps
 * untouched.
 */
static void
ud_rule_entry(struct ud_rule *r)
{
	int32_t cfa_off = (int32_t) arch_sp_after_ret(0);
	int i;

	r->kind = UD_CFI;
	r->cfa_how = UD_VAL;
	r->cfa_base = UD_SP;
	r->cfa_off = cfa_off;
	for (i = 0; i < UD_NSAVED; i++) {
		r->how[i] = arch_dwarf_saved[i] == UD_RA ? UD_AT : UD_SAME;
		r->base[i] = UD_CFA;
		r->off[i] = -cfa_off;
	}
}

/*
 * Builds the rule for lookup address pc, whose frame's code is at code
 * (pc + 1 for a return address). The trampoline's CFI is marked as a
 * signal frame, and describes the signal frame with expressions; we read
 * the registers there directly instead, also where there is no CFI at all.
 * Where no CFI covers an exact pc (pc == code) on a PLT stub's jump, the
 * rule is the entry's: a signal lands there too (plt.h).
 * Runs for u->tid, under u->lock for writing.
 */
static void
ud_rule_build(struct uw_dw *u, uint64_t pc, uint64_t code, struct ud_rule *r)
{
	long i = ud_mod_index(u->mods, pc);
	Dwarf_Frame *f = NULL;
	bool signal = false;
	struct ud_mod *m;
	int found;

	memset(r, 0, sizeof(*r));
	r->pc = pc;
	r->kind = UD_STOP;
	if (i < 0)
		return;
	m = &u->m[i];
	/* The module's Elf is shared with the libunwind backend's index builder. */
	pthread_mutex_lock(&u->mods->elf_lock);
	if (!m->path)
		ud_mod_open(u, m, u->mods->v[i]);
	found = ud_mod_frame(m, pc - m->bias, &f) == 0;
	pthread_mutex_unlock(&u->mods->elf_lock);
	if (!found) {
		if (ud_is_sigreturn(u->tid, code))
			r->kind = UD_SIGNAL;
		else if (pc == code && ud_is_plt_jump(u->tid, pc))
			ud_rule_entry(r);
		return;
	}
	if (dwarf_frame_info(f, NULL, NULL, &signal) != UD_RA)
		r->kind = UD_SLOW;
	else if (signal && ud_is_sigreturn(u->tid, code))
		r->kind = UD_SIGNAL;
	else
		r->kind = ud_compile(f, r);
	free(f);
	if (r->kind == UD_SLOW)
		debug_msg("unwind: CFI at %#llx in %s needs libunwind", (unsigned long long) pc, m->path);
}

/* The slot of pc in the rule table: its rule, or the empty slot to put it in. */
static struct ud_rule *
ud_rule_slot(struct uw_dw *u, uint64_t pc)
{
	size_t mask = ((size_t) 1 << u->rule_bits) - 1;
	size_t i = (size_t) ((pc * 0x9e3779b97f4a7c15ull) >> (64 - u->rule_bits));

	while (u->rules[i].kind != UD_EMPTY && u->rules[i].pc != pc)
		i = (i + 1) & mask;
	return &u->rules[i];
}

/* Doubles the table, or empties it at its largest size (the rules are rebuilt as needed). */
static void
ud_rules_grow(struct uw_dw *u)
{
	struct ud_rule *old = u->rules;
	size_t i, n = (size_t) 1 << u->rule_bits;
	unsigned int bits = u->rule_bits;

	u->rules = NULL;
	ud_rules_reset(u, bits < UD_RULE_BITS_MAX ? bits + 1 : bits);
	for (i = 0; bits < UD_RULE_BITS_MAX && i < n; i++)
		if (old[i].kind != UD_EMPTY) {
			*ud_rule_slot(u, old[i].pc) = old[i];
			u->nrules++;
		}
	free(old);
}

/* Finds or builds pc's rule; under u->lock for writing. */
static void
ud_rule_insert(struct uw_dw *u, uint64_t pc, uint64_t code, struct ud_rule *out)
{
	struct ud_rule *r = ud_rule_slot(u, pc);

	if (r->kind == UD_EMPTY) {	/* another unwind may have built it meanwhile */
		if (2 * (u->nrules + 1) > (size_t) 1 << u->rule_bits) {
			ud_rules_grow(u);
			r = ud_rule_slot(u, pc);
		}
		ud_rule_build(u, pc, code, r);
		u->nrules++;
	}
	*out = *r;
}

/*
 * The read lock is held for a whole walk, not a frame, so that unwinds pay
 * for one lock pair each; a miss trades it for the write lock. A waiting
 * writer keeps new readers out (PREFER_WRITER), so a miss is not starved
 * by tracer threads that take turns holding it for reading.
 */
void
ud_rule_get(struct uw_dw *u, pid_t tid, uint64_t pc, uint64_t code, struct ud_rule *out)
{
	const struct ud_rule *r = ud_rule_slot(u, pc);

	if (r->kind != UD_EMPTY) {
		*out = *r;
		return;
	}
	pthread_rwlock_unlock(&u->lock);
	pthread_rwlock_wrlock(&u->lock);
	u->tid = tid;
	ud_rule_insert(u, pc, code, out);
	pthread_rwlock_unlock(&u->lock);
	pthread_rwlock_rdlock(&u->lock);
}

void
ud_begin(struct uw_dw *u)
{
	if (__atomic_load_n(&u->mods_generation, __ATOMIC_ACQUIRE) != u->mods->generation
	    || u->nm != u->mods->n) {
		pthread_rwlock_wrlock(&u->lock);
		if (u->mods_generation != u->mods->generation || u->nm != u->mods->n)
			ud_mods_sync(u);
		pthread_rwlock_unlock(&u->lock);
	}
	pthread_rwlock_rdlock(&u->lock);
}

void
ud_end(struct uw_dw *u)
{
	pthread_rwlock_unlock(&u->lock);
}

/* ---- the shared state ---- */

void *
ud_new(struct jt_modules *mods)
{
	struct uw_dw *u = xcalloc(1, sizeof(*u));
	pthread_rwlockattr_t attr;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(u);
		return NULL;
	}
	u->mods = mods;
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&u->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	ud_mods_sync(u);
	return u;
}

void
ud_destroy(void *state)
{
	struct uw_dw *u = state;
	size_t i;

	if (u->n_slow)
		debug_msg("unwind: %lu unwinds went to libunwind", u->n_slow);
	if (u->n_walks)
		debug_msg("unwind: %lu of %lu unwinds took the rest of their thread's last walk (its memo)", u->n_memo, u->n_walks);
	for (i = 0; i < u->nm; i++)
		ud_mod_close(&u->m[i]);
	if (u->slow)
		uw_backend_libunwind.destroy(u->slow);
	pthread_rwlock_destroy(&u->lock);
	free(u->m);
	free(u->rules);
	free(u);
}
