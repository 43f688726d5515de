/* prologue.c - proves with capstone that a breakpoint or probe past a function's first instructions sees what one on its entry would. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include "emu_insn.h"
#include "prologue.h"

/* The register of each argument, in the SysV x86-64 order, by the encoding's numbers (rdi, rsi, rdx, rcx, r8, r9). */
static const uint8_t prologue_arg_regs[6] = { 7, 6, 2, 1, 8, 9 };

#define PROLOGUE_RSP 4

/* The registers its caller keeps (rbx, rbp, r12-r15), by the encoding's numbers, as a mask. */
#define PROLOGUE_CALLEE_SAVED ((1u << 3) | (1u << 5) | (0xfu << 12))

/* The registers of the arguments with bit n set in args, by the encoding's numbers, as a mask. */
static unsigned
prologue_arg_mask(unsigned args)
{
	unsigned mask = 0;

	for (unsigned a = 0; a < sizeof(prologue_arg_regs); a++)
		if (args >> a & 1)
			mask |= 1u << prologue_arg_regs[a];
	return mask;
}

/* Non-zero when ci leaves its own flow: a jump, call, return or interrupt. */
static int
prologue_is_branch(csh h, const cs_insn *ci)
{
	return cs_insn_group(h, ci, X86_GRP_JUMP) || cs_insn_group(h, ci, X86_GRP_CALL) ||
	       cs_insn_group(h, ci, X86_GRP_RET) || cs_insn_group(h, ci, X86_GRP_INT) ||
	       cs_insn_group(h, ci, X86_GRP_IRET);
}

/* How far ci lowers the stack pointer: 8 for a 64-bit push, N for sub $N,%rsp; -1 for anything else. */
static int64_t
prologue_sp_delta(const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	if (ci->id == X86_INS_PUSH && x->prefix[2] != X86_PREFIX_OPSIZE)
		return 8;
	if (ci->id == X86_INS_SUB && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[0].reg == X86_REG_RSP && x->operands[1].type == X86_OP_IMM && x->operands[1].imm >= 0)
		return x->operands[1].imm;
	return -1;
}

/* The index of ci's memory operand, or -1 when it has none. */
static int
prologue_mem_operand(const cs_insn *ci)
{
	for (uint8_t i = 0; i < ci->detail->x86.op_count; i++)
		if (ci->detail->x86.operands[i].type == X86_OP_MEM)
			return i;
	return -1;
}

/*
 * Non-zero when ci's memory operand is one it only reads, by the kind of
 * instruction: the load of a mov, movzx, movsx or movsxd, the source of an
 * add, sub, and, or or xor into a register (jemalloc's free adds its
 * thread's TLS base), a cmp or test, or lea's address. Capstone's own
 * access flags are not enough: 4.0 says that lock cmpxchg and movnti only
 * read theirs.
 */
static int
prologue_loads(const cs_insn *ci)
{
	switch (ci->id) {
	case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSX: case X86_INS_MOVSXD:
	case X86_INS_ADD: case X86_INS_SUB: case X86_INS_AND: case X86_INS_OR: case X86_INS_XOR:
		return prologue_mem_operand(ci) == 1 && ci->detail->x86.prefix[0] == 0;
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_LEA:
		return 1;
	default:
		return 0;
	}
}

/*
 * Checks that the first instruction ci always goes on to the next one, writes
 * no memory but by a push and none of the registers in the mask keep (by the
 * encoding's numbers); returns its stack pointer change, or -1.
 */
static int64_t
prologue_check_first(csh h, const cs_insn *ci, unsigned keep, const char **why)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	int64_t delta = 0;

	if (prologue_is_branch(h, ci) || ci->detail->x86.prefix[0] == X86_PREFIX_REP ||
	    ci->detail->x86.prefix[0] == X86_PREFIX_REPNE) {
		*why = "its first instruction does not always go on to the next one";
		return -1;
	}
	if (prologue_mem_operand(ci) >= 0 && !prologue_loads(ci)) {
		*why = "its first instruction writes memory";
		return -1;
	}
	if (cs_regs_access(h, ci, rd, &nrd, wr, &nwr) != CS_ERR_OK) {
		*why = "capstone cannot tell the registers its first instruction writes";
		return -1;
	}
	for (uint8_t i = 0; i < nwr; i++) {
		uint8_t r = emu_cs_gpr(wr[i]);

		if (r == PROLOGUE_RSP) {
			if ((delta = prologue_sp_delta(ci)) < 0) {
				*why = "its first instruction moves the stack pointer other than by a push or a sub of a constant";
				return -1;
			}
			continue;
		}
		if (r != OPD_NONE && (keep >> r & 1)) {
			*why = prologue_arg_mask(0x3f) >> r & 1 ? "its first instruction changes an argument register"
								: "its first instruction changes a register its caller keeps";
			return -1;
		}
	}
	return delta;
}

/* Non-zero when a direct jump or call among insns[0..n) leads to an address in [lo, hi]. */
static int
prologue_reached(csh h, const cs_insn *insns, size_t n, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &insns[i].detail->x86;

		if (!cs_insn_group(h, &insns[i], X86_GRP_JUMP) && !cs_insn_group(h, &insns[i], X86_GRP_CALL))
			continue;
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM && (uint64_t)x->operands[0].imm >= lo &&
		    (uint64_t)x->operands[0].imm <= hi)
			return 1;
	}
	return 0;
}

/* Room for an instruction's text: capstone's mnemonic, a space, its operands. */
#define PROLOGUE_TEXT (sizeof(((cs_insn *)0)->mnemonic) + 1 + sizeof(((cs_insn *)0)->op_str))

/* ci as text ("push r12"), for messages. */
static void
prologue_insn_text(const cs_insn *ci, char buf[PROLOGUE_TEXT])
{
	snprintf(buf, PROLOGUE_TEXT, "%s%s%s", ci->mnemonic, ci->op_str[0] ? " " : "", ci->op_str);
}

int
prologue_move(const uint8_t *code, size_t len, uint64_t entry, unsigned args, struct prologue_move *m,
	      const char **why)
{
	cs_insn *insns;
	size_t n, end;
	int64_t delta;
	csh h;

	*why = "capstone cannot decode the function";
	if (emu_handle(&h) < 0 || (n = cs_disasm(h, code, len, entry, 0, &insns)) == 0)
		return -1;
	end = (size_t)(insns[n - 1].address + insns[n - 1].size - entry);
	delta = prologue_check_first(h, &insns[0], prologue_arg_mask(args), why);
	m->site = entry + insns[0].size;
	m->sp_delta = (uint64_t)delta;
	prologue_insn_text(&insns[0], m->skipped);
	if (delta >= 0 && (n < 2 || end != len)) {
		*why = "capstone cannot decode the whole function, so jumps to its second instruction cannot be ruled out";
		delta = -1;
	} else if (delta >= 0 && prologue_reached(h, insns, n, m->site, m->site)) {
		*why = "a jump in the function leads to its second instruction";
		delta = -1;
	}
	cs_free(insns, n);
	return delta < 0 ? -1 : 0;
}

/* ---- where an entry-only kernel uprobe goes ---- */

/* Non-zero for a conditional jump with a relative target and no prefix: 70-7f rel8, 0f 80-8f rel32. */
static int
prologue_is_jcc(const cs_insn *ci)
{
	const uint8_t *b = ci->bytes;

	return (ci->size == 2 && b[0] >= 0x70 && b[0] <= 0x7f) ||
	       (ci->size == 6 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f);
}

/*
 * Non-zero when Linux 6.1 emulates ci at a uprobe instead of stepping it out
 * of line (arch/x86/kernel/uprobes.c, branch_setup_xol_ops and
 * push_setup_xol_ops): a push of a 64-bit general register (50-57, or 41
 * 50-57 for r8-r15, no other prefix); jmp, call and jcc with a relative
 * target and no prefix (with 66, 6.1 refuses the probe; a segment prefix
 * too; others are left as stepped, to be safe); nop (90, and 66 90 since
 * the stable updates of January 2023: before, the probe was refused).
 * Later kernels emulate more (nopl); endbr64 is stepped.
 */
static int
prologue_emulated(const cs_insn *ci)
{
	const uint8_t *b = ci->bytes;
	size_t n = ci->size, p = 0;

	if ((n == 1 && b[0] >= 0x50 && b[0] <= 0x57) || (n == 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57))
		return 1;
	while (p + 1 < n && b[p] == 0x66)
		p++;
	if (p + 1 == n && b[p] == 0x90)
		return 1;
	return prologue_is_jcc(ci) || (n == 2 && b[0] == 0xeb) || (n == 5 && (b[0] == 0xe9 || b[0] == 0xe8));
}

/*
 * Non-zero when ci cannot keep the thread from reaching the next
 * instruction but by a fault: no ud2 and no privileged instruction. A
 * load may fault (a wild pointer passed to the allocator): the thread then
 * dies in the allocator's first instructions, before it did anything, and
 * only that call goes uncounted where a probe at the entry would have
 * counted it. jemalloc's free loads its thread's cache before its first
 * branch: refusing loads would leave it stepped.
 */
static int
prologue_reaches_next(csh h, const cs_insn *ci)
{
	return ci->id != X86_INS_UD2 && ci->id != X86_INS_UD2B && ci->id != X86_INS_UD0 &&
	       !cs_insn_group(h, ci, X86_GRP_PRIVILEGE);
}

/* The longest run of instructions skipped before the first emulated one. */
#define PROLOGUE_MAX_RUN 12

/*
 * The index of the first emulated instruction after the entry in
 * insns[0..n) when every one before it passes what prologue_move asks of a
 * first instruction (goes on to the next, writes no memory, moves the stack
 * pointer only by a sub of a constant, a push being emulated, writes no
 * argument register in args), stops only by a fault (prologue_reaches_next), and
 * writes no register its caller keeps, which the unwinder would then miss
 * in the copied registers; 0 when there is none within PROLOGUE_MAX_RUN.
 * *sp_delta: what they took off the stack pointer.
 */
static size_t
prologue_run(csh h, const cs_insn *insns, size_t n, unsigned args, uint64_t *sp_delta)
{
	const char *why;
	int64_t d;

	*sp_delta = 0;
	for (size_t k = 0; k < n && k <= PROLOGUE_MAX_RUN; k++) {
		if (k > 0 && prologue_emulated(&insns[k]))
			return k;
		if (k == PROLOGUE_MAX_RUN || !prologue_reaches_next(h, &insns[k]) ||
		    (d = prologue_check_first(h, &insns[k], prologue_arg_mask(args) | PROLOGUE_CALLEE_SAVED, &why)) < 0)
			return 0;
		*sp_delta += (uint64_t)d;
	}
	return 0;
}

/* Fills *out with site, sp_delta and what is said of them. */
static void __attribute__((format(printf, 5, 6)))
prologue_site_set(struct prologue_site *out, uint64_t site, uint64_t sp_delta, int emulated, const char *fmt, ...)
{
	va_list ap;

	out->site = site;
	out->sp_delta = sp_delta;
	out->emulated = emulated;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

int
prologue_probe_site(const uint8_t *code, size_t len, uint64_t addr, unsigned args, struct prologue_site *out)
{
	char text[PROLOGUE_TEXT];
	cs_insn *insns;
	uint64_t delta;
	size_t n, s;
	int whole;
	csh h;

	prologue_site_set(out, addr, 0, 0, "entry: not decoded, stepped");
	if (len == 0 || emu_handle(&h) < 0)
		return -1;
	if ((n = cs_disasm(h, code, len, addr, 0, &insns)) == 0)
		return 0;
	prologue_insn_text(&insns[0], text);
	prologue_site_set(out, addr, 0, prologue_emulated(&insns[0]), "entry: %s, %s", text,
			  prologue_emulated(&insns[0]) ? "emulated" : "stepped");
	/*
	 * Only when the whole function decodes can its jumps into the skipped
	 * part be ruled out. The site stays before any early return (glibc's
	 * free tests its argument and returns on NULL): every call is still an
	 * event, free(NULL) counted as a call as the breakpoints count it, and
	 * the conditional jump of that test is itself emulated.
	 */
	whole = insns[n - 1].address + insns[n - 1].size - addr == len;
	if (!out->emulated && whole && (s = prologue_run(h, insns, n, args, &delta)) &&
	    !prologue_reached(h, insns, n, addr + 1, insns[s].address)) {
		char last[PROLOGUE_TEXT];

		prologue_insn_text(&insns[s - 1], last);
		prologue_insn_text(&insns[s], text);
		if (s == 1)
			prologue_site_set(out, insns[s].address, delta, 1, "past its first instruction (%s): %s, emulated",
					  last, text);
		else
			prologue_site_set(out, insns[s].address, delta, 1, "past %zu instructions (%s ... %s): %s, emulated",
					  s, insns[0].mnemonic, last, text);
	}
	cs_free(insns, n);
	return 0;
}
