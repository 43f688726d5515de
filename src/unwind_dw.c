/* unwind_dw.c - the default unwinder: libdw CFI compiled into small per-pc rules, one stack read per unwind. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>
#include <sys/uio.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "mem.h"
#include "modules.h"
#include "unwind_backend.h"
#include "util.h"

#define UD_NREGS	17		/* DWARF registers 0..15 (rax..r15) and 16, the return address */
#define UD_RSP		7
#define UD_RA		16
#define UD_CFA		UD_NREGS	/* as the base of a rule: the frame's CFA */
#define UD_NSAVED	7
#define UD_PAGE		4096u
/*
 * A remote read costs about 2 us, plus 0.4 us a page. Reading four pages
 * more is cheaper than a second read, but a frame of a megabyte is not.
 */
#define UD_SPAN_MIN	1024u		/* least stack an unwind is predicted to read */
#define UD_SPAN_MAX	(16u * 1024)	/* most, and how far from rsp the prediction looks */
#define UD_WIN_CAP	(UD_SPAN_MAX + UD_PAGE)	/* bytes one window of stack can hold */
#define UD_MARGIN	256u		/* read this far below the first missed slot of a frame */
#define UD_RULE_BITS_MIN 10
#define UD_RULE_BITS_MAX 16		/* 64k rules, 4 MiB; a full table starts over */
#define UD_UC_GREGS	40		/* offset of uc_mcontext.gregs in the kernel's struct ucontext */

/* The registers a rule restores besides rsp: the callee-saved ones and the return address. */
static const uint8_t ud_saved[UD_NSAVED] = { 3, 6, 12, 13, 14, 15, UD_RA };

enum ud_kind {
	UD_EMPTY,	/* a free slot of the rule table */
	UD_CFI,		/* the CFA and saved registers as compiled below */
	UD_SIGNAL,	/* the rt_sigreturn trampoline: registers come from the ucontext */
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
	uint8_t how[UD_NSAVED], base[UD_NSAVED];	/* for ud_saved[i]; base may be UD_CFA */
	int32_t cfa_off;
	int32_t off[UD_NSAVED];
};

/* One frame's registers in DWARF numbering; r[UD_RA] is the frame's pc. */
struct ud_regs {
	uint64_t r[UD_NREGS];
	uint32_t known;		/* bit n: r[n] holds the value */
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

/* The stack bytes of one unwind: [base, base + len) of the thread. */
struct ud_window {
	uint64_t base;
	size_t len;
	int end;		/* the read stopped short: base + len is not readable */
	uint64_t rsp0, top;	/* frame 0's rsp; the end of what was read up to UD_SPAN_MAX above it */
	size_t span;		/* predicted bytes above rsp an unwind reads */
	uint8_t *buf;		/* UD_WIN_CAP bytes */
};

struct uw_dw {
	struct jt_modules *mods;
	uint64_t mods_generation;	/* of mods when m[] and rules[] were last valid */
	struct ud_mod *m;		/* parallel to mods->v */
	size_t nm;
	struct ud_rule *rules;		/* open addressing, 1 << rule_bits slots */
	unsigned int rule_bits;
	size_t nrules;

	/* State of the unwind in progress. */
	pid_t tid;
	uint64_t floor;			/* rsp of the frame being stepped: nothing below is needed */
	struct ud_window w;
	struct uw_overrides ov;

	void *slow;			/* the libunwind backend, made at the first UD_SLOW rule */
	unsigned long n_slow;		/* unwinds handed to it */
};

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
	free(old);
	u->nm = u->mods->n;
	u->mods_generation = u->mods->generation;
	ud_rules_reset(u, UD_RULE_BITS_MIN);
}

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

/* Fills the window from start to the end of the page that holds the predicted span. */
static void
ud_window_fill(struct uw_dw *u, uint64_t start)
{
	struct ud_window *w = &u->w;
	size_t want = (size_t) (((start + w->span) | (UD_PAGE - 1)) + 1 - start);

	if (want > UD_WIN_CAP)
		want = UD_WIN_CAP;
	w->base = start;
	w->len = ud_fetch(u->tid, start, w->buf, want);
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
	size_t used = (size_t) (w->top - w->rsp0);
	size_t decayed = w->span - w->span / 16;

	w->span = used > decayed ? used : decayed;
	if (w->span < UD_SPAN_MIN)
		w->span = UD_SPAN_MIN;
}

/*
 * Copies len target bytes at addr, as jmptrace's overrides say they read.
 * A miss above the window, in a frame that is deeper than predicted,
 * refills it from just below the missed slot; anything else (another
 * stack, a global) is one mem_read. Returns 0, or -1 when unreadable.
 */
static int
ud_read(struct uw_dw *u, uint64_t addr, void *out, size_t len)
{
	struct ud_window *w = &u->w;
	uint64_t start;
	int i;

	if (!ud_window_has(w, addr, len) && !w->end && addr >= w->base + w->len) {
		start = addr > u->floor + UD_MARGIN ? (addr - UD_MARGIN) & ~(uint64_t) 7 : u->floor;
		ud_window_fill(u, start);
	}
	if (ud_window_has(w, addr, len)) {
		memcpy(out, w->buf + (addr - w->base), len);
		if (addr + len > w->top && addr + len - w->rsp0 <= UD_SPAN_MAX)
			w->top = addr + len;
	} else if (mem_read(u->tid, addr, out, len) != 0) {
		return -1;
	}
	for (i = 0; i < u->ov.n; i++)
		if (u->ov.addr[i] >= addr && u->ov.addr[i] - addr + 8 <= len)
			memcpy((uint8_t *) out + (u->ov.addr[i] - addr), &u->ov.value[i], 8);
	return 0;
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
	/* The ABI makes rsp the CFA; a frame that says otherwise is left to libunwind. */
	if (dwarf_frame_register(f, UD_RSP, mem, &ops, &nops) != 0
	    || ud_compile_reg(ops, nops, &how, &base, &off) != 0
	    || (how == UD_AT || (how == UD_VAL && (base != UD_CFA || off != 0))))
		return UD_SLOW;
	for (i = 0; i < UD_NSAVED; i++) {
		if (dwarf_frame_register(f, ud_saved[i], mem, &ops, &nops) != 0
		    || ud_compile_reg(ops, nops, &r->how[i], &r->base[i], &r->off[i]) != 0)
			return UD_SLOW;
		/*
		 * libdw 0.188's x86-64 defaults mark rax the same where rbx was
		 * meant, so an untouched rbx reads as undefined; no compiler marks
		 * a callee-saved register undefined on purpose.
		 */
		if (r->how[i] == UD_UNDEF && ud_saved[i] != UD_RA)
			r->how[i] = UD_SAME;
	}
	return UD_CFI;
}

/* Whether the code at addr is the sigreturn trampoline (arch_is_sigreturn). */
static int
ud_is_sigreturn(struct uw_dw *u, uint64_t addr)
{
	uint8_t b[ARCH_SIGRETURN_LEN];

	return mem_read(u->tid, addr, b, sizeof(b)) == 0 && arch_is_sigreturn(b);
}

/*
 * Builds the rule for lookup address pc, whose frame's code is at code
 * (pc + 1 for a return address). The trampoline's CFI is marked as a
 * signal frame, and describes the ucontext with expressions; we read the
 * ucontext directly instead, also where there is no CFI at all.
 */
static void
ud_rule_build(struct uw_dw *u, uint64_t pc, uint64_t code, struct ud_rule *r)
{
	long i = ud_mod_index(u->mods, pc);
	Dwarf_Frame *f = NULL;
	bool signal = false;
	struct ud_mod *m;

	memset(r, 0, sizeof(*r));
	r->pc = pc;
	r->kind = UD_STOP;
	if (i < 0)
		return;
	m = &u->m[i];
	if (!m->path)
		ud_mod_open(u, m, u->mods->v[i]);
	if (ud_mod_frame(m, pc - m->bias, &f) != 0) {
		if (ud_is_sigreturn(u, code))
			r->kind = UD_SIGNAL;
		return;
	}
	if (dwarf_frame_info(f, NULL, NULL, &signal) != UD_RA)
		r->kind = UD_SLOW;
	else if (signal && ud_is_sigreturn(u, code))
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

static const struct ud_rule *
ud_rule_get(struct uw_dw *u, uint64_t pc, uint64_t code)
{
	struct ud_rule *r = ud_rule_slot(u, pc);

	if (r->kind != UD_EMPTY)
		return r;
	if (2 * (u->nrules + 1) > (size_t) 1 << u->rule_bits) {
		ud_rules_grow(u);
		r = ud_rule_slot(u, pc);
	}
	ud_rule_build(u, pc, code, r);
	u->nrules++;
	return r;
}

/* ---- stepping ---- */

/* Where the DWARF registers sit in a signal's uc_mcontext.gregs. */
static const uint8_t ud_greg[UD_NREGS] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

/* Computes base + off, or the word there; base is a register of rs or UD_CFA. */
static int
ud_eval(struct uw_dw *u, const struct ud_regs *rs, uint64_t cfa, int how, int base, int32_t off,
	uint64_t *out)
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
	return ud_read(u, a, out, sizeof(*out));
}

/*
 * Moves rs to the caller's registers by rule r, in place (it runs for every
 * frame). Returns 1, or 0 at the end of the stack: no return address, or a
 * CFA that does not go up (a corrupt stack would otherwise loop).
 */
static int
ud_step_cfi(struct uw_dw *u, const struct ud_rule *r, struct ud_regs *rs)
{
	uint64_t cfa, v[UD_NSAVED] = { 0 };
	uint32_t known = 0;
	int i;

	if (ud_eval(u, rs, 0, r->cfa_how, r->cfa_base, r->cfa_off, &cfa) != 0 || cfa <= rs->r[UD_RSP])
		return 0;
	for (i = 0; i < UD_NSAVED; i++) {
		if (r->how[i] == UD_SAME) {
			v[i] = rs->r[ud_saved[i]];
			known |= rs->known & (1u << ud_saved[i]);
		} else if (r->how[i] != UD_UNDEF
			   && ud_eval(u, rs, cfa, r->how[i], r->base[i], r->off[i], &v[i]) == 0) {
			known |= 1u << ud_saved[i];
		}
	}
	if (!(known & (1u << UD_RA)))
		return 0;
	for (i = 0; i < UD_NSAVED; i++)
		rs->r[ud_saved[i]] = v[i];
	rs->r[UD_RSP] = cfa;
	rs->known = known | 1u << UD_RSP;
	return 1;
}

/*
 * Steps over the rt_sigreturn trampoline. When a handler returns into it,
 * rsp points at the ucontext of the kernel's rt_sigframe, which holds every
 * register of the interrupted code. A handler on a sigaltstack interrupted
 * code on another stack, which then gets a window of its own.
 */
static int
ud_step_signal(struct uw_dw *u, struct ud_regs *rs)
{
	uint64_t g[REG_RIP + 1];
	int i;

	if (ud_read(u, rs->r[UD_RSP] + UD_UC_GREGS, g, sizeof(g)) != 0)
		return 0;
	for (i = 0; i < UD_NREGS; i++)
		rs->r[i] = g[ud_greg[i]];
	rs->known = (1u << UD_NREGS) - 1;
	if (!ud_window_has(&u->w, rs->r[UD_RSP], 8))
		ud_window_fill(u, rs->r[UD_RSP]);
	return 1;
}

/* Hands the whole unwind to libunwind, for CFI we do not evaluate. */
static int
ud_stack_slow(struct uw_dw *u, pid_t tid, const struct user_regs_struct *regs, uint64_t *pcs, int max)
{
	int i;

	if (!u->slow && !(u->slow = uw_backend_libunwind.new(u->mods)))
		return 1;	/* pcs[0] is set */
	for (i = 0; i < u->ov.n; i++)
		uw_backend_libunwind.override(u->slow, u->ov.addr[i], u->ov.value[i]);
	u->n_slow++;
	return uw_backend_libunwind.stack(u->slow, tid, regs, pcs, max);
}

/* Walks the frames above frame 0 into pcs[1..max-1]; returns the count, or -1 to go slow. */
static int
ud_walk(struct uw_dw *u, struct ud_regs *rs, uint64_t *pcs, int max)
{
	const struct ud_rule *r;
	int n = 1, exact = 1, rc = 1;

	while (n < max && rc > 0) {
		/* A return address is looked up in its call, an interrupted pc as it is. */
		r = ud_rule_get(u, rs->r[UD_RA] - !exact, rs->r[UD_RA]);
		u->floor = rs->r[UD_RSP];
		if (r->kind == UD_SLOW)
			return -1;
		exact = r->kind == UD_SIGNAL;
		if (exact)	/* this frame is the trampoline; the next is the interrupted pc */
			pcs[n - 1] |= UNWIND_PC_SIGNAL;
		if (r->kind == UD_CFI)
			rc = ud_step_cfi(u, r, rs);
		else
			rc = exact ? ud_step_signal(u, rs) : 0;
		if (rc > 0 && rs->r[UD_RA] != 0)
			pcs[n++] = rs->r[UD_RA];
		else
			rc = 0;
	}
	return n;
}

static int
ud_stack(void *state, pid_t tid, const struct user_regs_struct *regs, uint64_t *pcs, int max)
{
	struct uw_dw *u = state;
	struct ud_regs rs;
	int i, n;

	if (max < 1) {
		u->ov.n = 0;
		return -1;
	}
	if (u->mods_generation != u->mods->generation || u->nm != u->mods->n)
		ud_mods_sync(u);
	u->tid = tid;
	for (i = 0; i < UD_NREGS; i++)
		memcpy(&rs.r[i], (const char *) regs + uw_user_offset[i], sizeof(rs.r[i]));
	rs.known = (1u << UD_NREGS) - 1;
	u->floor = u->w.rsp0 = u->w.top = regs->rsp;
	ud_window_fill(u, regs->rsp);
	pcs[0] = regs->rip;
	n = ud_walk(u, &rs, pcs, max);
	if (n < 0)
		n = ud_stack_slow(u, tid, regs, pcs, max);
	ud_window_learn(&u->w);
	u->ov.n = 0;
	return n;
}

/* ---- the backend ---- */

static void *
ud_new(struct jt_modules *mods)
{
	struct uw_dw *u = xcalloc(1, sizeof(*u));

	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(u);
		return NULL;
	}
	u->mods = mods;
	u->w.buf = xmalloc(UD_WIN_CAP);
	u->w.span = UD_SPAN_MIN;
	ud_mods_sync(u);
	return u;
}

static void
ud_flush(void *state)
{
	struct uw_dw *u = state;
	size_t i;

	for (i = 0; i < u->nm; i++)
		ud_mod_close(&u->m[i]);
	ud_mods_sync(u);
	if (u->slow)
		uw_backend_libunwind.flush(u->slow);
}

static void
ud_destroy(void *state)
{
	struct uw_dw *u = state;
	size_t i;

	if (u->n_slow)
		debug_msg("unwind: %lu unwinds went to libunwind", u->n_slow);
	for (i = 0; i < u->nm; i++)
		ud_mod_close(&u->m[i]);
	if (u->slow)
		uw_backend_libunwind.destroy(u->slow);
	free(u->m);
	free(u->rules);
	free(u->w.buf);
	free(u);
}

static void
ud_override(void *state, uint64_t addr, uint64_t value)
{
	uw_overrides_add(&((struct uw_dw *) state)->ov, addr, value);
}

const struct uw_backend uw_backend_dw = {
	.name = "dw",
	.new = ud_new,
	.destroy = ud_destroy,
	.stack = ud_stack,
	.override = ud_override,
	.flush = ud_flush,
};
