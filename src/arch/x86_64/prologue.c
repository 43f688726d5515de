/* prologue.c - proves with capstone that a breakpoint after a function's first instruction sees what one on its entry would. */
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include "emu_insn.h"
#include "prologue.h"

/* The register of each argument, in the SysV x86-64 order, by the encoding's numbers (rdi, rsi, rdx, rcx, r8, r9). */
static const uint8_t prologue_arg_regs[6] = { 7, 6, 2, 1, 8, 9 };

#define PROLOGUE_RSP 4

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
 * instruction: the load of a mov, movzx, movsx or movsxd, a cmp or test,
 * or lea's address. Capstone's own access flags are not enough: 4.0 says
 * that lock cmpxchg and movnti only read theirs.
 */
static int
prologue_loads(const cs_insn *ci)
{
	switch (ci->id) {
	case X86_INS_MOV: case X86_INS_MOVZX: case X86_INS_MOVSX: case X86_INS_MOVSXD:
		return prologue_mem_operand(ci) == 1;
	case X86_INS_CMP: case X86_INS_TEST: case X86_INS_LEA:
		return 1;
	default:
		return 0;
	}
}

/* Checks that the first instruction ci keeps what the handler reads; returns its stack pointer change, or -1. */
static int64_t
prologue_check_first(csh h, const cs_insn *ci, unsigned args, const char **why)
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
		for (unsigned a = 0; a < sizeof(prologue_arg_regs); a++)
			if ((args >> a & 1) && r == prologue_arg_regs[a]) {
				*why = "its first instruction changes an argument register";
				return -1;
			}
	}
	return delta;
}

/* Non-zero when a direct jump or call among insns[0..n) leads to target. */
static int
prologue_reached(csh h, const cs_insn *insns, size_t n, uint64_t target)
{
	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &insns[i].detail->x86;

		if (!cs_insn_group(h, &insns[i], X86_GRP_JUMP) && !cs_insn_group(h, &insns[i], X86_GRP_CALL))
			continue;
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM && (uint64_t)x->operands[0].imm == target)
			return 1;
	}
	return 0;
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
	delta = prologue_check_first(h, &insns[0], args, why);
	m->site = entry + insns[0].size;
	m->sp_delta = (uint64_t)delta;
	snprintf(m->skipped, sizeof(m->skipped), "%s%s%s", insns[0].mnemonic, insns[0].op_str[0] ? " " : "",
		 insns[0].op_str);
	if (delta >= 0 && (n < 2 || end != len)) {
		*why = "capstone cannot decode the whole function, so jumps to its second instruction cannot be ruled out";
		delta = -1;
	} else if (delta >= 0 && prologue_reached(h, insns, n, m->site)) {
		*why = "a jump in the function leads to its second instruction";
		delta = -1;
	}
	cs_free(insns, n);
	return delta < 0 ? -1 : 0;
}
