/* emu_decode.c - decodes an allocator's first instruction once with capstone, into the form emu.c replays. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include "arch.h"
#include "emu.h"
#include "emu_insn.h"

/* Capstone's names for each register, by size then x86 number; row 3 is the low bytes. */
static const x86_reg emu_cs_regs[4][16] = {
	{ X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX, X86_REG_RSP, X86_REG_RBP,
	  X86_REG_RSI, X86_REG_RDI, X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
	  X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15 },
	{ X86_REG_EAX, X86_REG_ECX, X86_REG_EDX, X86_REG_EBX, X86_REG_ESP, X86_REG_EBP,
	  X86_REG_ESI, X86_REG_EDI, X86_REG_R8D, X86_REG_R9D, X86_REG_R10D, X86_REG_R11D,
	  X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D },
	{ X86_REG_AX, X86_REG_CX, X86_REG_DX, X86_REG_BX, X86_REG_SP, X86_REG_BP,
	  X86_REG_SI, X86_REG_DI, X86_REG_R8W, X86_REG_R9W, X86_REG_R10W, X86_REG_R11W,
	  X86_REG_R12W, X86_REG_R13W, X86_REG_R14W, X86_REG_R15W },
	{ X86_REG_AL, X86_REG_CL, X86_REG_DL, X86_REG_BL, X86_REG_SPL, X86_REG_BPL,
	  X86_REG_SIL, X86_REG_DIL, X86_REG_R8B, X86_REG_R9B, X86_REG_R10B, X86_REG_R11B,
	  X86_REG_R12B, X86_REG_R13B, X86_REG_R14B, X86_REG_R15B },
};

static const x86_reg emu_cs_high8[4] = { X86_REG_AH, X86_REG_CH, X86_REG_DH, X86_REG_BH };

/* Conditional jumps, indexed by the condition code the opcode carries in its low nibble. */
static const x86_insn emu_cs_jcc[16] = {
	X86_INS_JO, X86_INS_JNO, X86_INS_JB, X86_INS_JAE, X86_INS_JE, X86_INS_JNE,
	X86_INS_JBE, X86_INS_JA, X86_INS_JS, X86_INS_JNS, X86_INS_JP, X86_INS_JNP,
	X86_INS_JL, X86_INS_JGE, X86_INS_JLE, X86_INS_JG,
};

/*
 * One capstone handle for the whole process, opened on first use. Its options
 * are set once and never change, and jmptrace decodes from its single thread,
 * so sharing it is safe; opening one per breakpoint would cost an allocation
 * and option setup for each of hundreds of insertions. It is never closed:
 * it lives as long as the process.
 */
static csh emu_cs;
static int emu_cs_state;	/* 0: not tried yet, 1: open, -1: cs_open failed */

int
emu_handle(csh *h)
{
	if (emu_cs_state == 0) {
		emu_cs_state = -1;
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &emu_cs) == CS_ERR_OK) {
			if (cs_option(emu_cs, CS_OPT_DETAIL, CS_OPT_ON) == CS_ERR_OK)
				emu_cs_state = 1;
			else
				cs_close(&emu_cs);
		}
	}
	*h = emu_cs;
	return emu_cs_state == 1 ? 0 : -1;
}

/* Our operand reference for a capstone register, and its size; OPD_NONE for non-GPRs (rip, segments, cr0...). */
static uint8_t
emu_reg_ref(x86_reg reg, unsigned int *size)
{
	static const unsigned int sizes[4] = { 8, 4, 2, 1 };

	for (int s = 0; s < 4; s++)
		for (int i = 0; i < 16; i++)
			if (emu_cs_regs[s][i] == reg) {
				*size = sizes[s];
				return (uint8_t)i;
			}
	for (int i = 0; i < 4; i++)
		if (emu_cs_high8[i] == reg) {
			*size = 1;
			return (uint8_t)(OPD_HIGH8 | (4 + i));
		}
	return OPD_NONE;
}

uint8_t
emu_cs_gpr(x86_reg reg)
{
	unsigned int size;
	uint8_t ref = emu_reg_ref(reg, &size);

	if (ref == OPD_NONE)
		return OPD_NONE;
	return ref & OPD_HIGH8 ? (uint8_t)((ref & 0xf) - 4) : ref;
}

/* A 64-bit register as an address component; REG_NONE for none, -1 for anything else (eip, riz...). */
static int
emu_addr_reg(x86_reg reg, uint8_t *out)
{
	unsigned int size;

	*out = REG_NONE;
	if (reg == X86_REG_INVALID)
		return 0;
	*out = emu_reg_ref(reg, &size);
	return *out != OPD_NONE && size == 8 ? 0 : -1;
}

/*
 * Records a memory operand. A rip-relative displacement is made absolute now,
 * against the end of the instruction, so emu_exec never needs rip. Segments
 * other than fs and gs have base 0 in 64-bit mode, so they are ignored.
 */
static int
emu_prep_mem(struct jt_insn *in, const cs_insn *ci, const x86_op_mem *m)
{
	if (ci->detail->x86.addr_size != 8)
		return -1;
	in->seg = m->segment == X86_REG_FS ? SEG_FS : m->segment == X86_REG_GS ? SEG_GS : 0;
	in->disp = m->disp;
	in->scale = (uint8_t)m->scale;
	if (emu_addr_reg(m->index, &in->index) < 0)
		return -1;
	if (m->base == X86_REG_RIP) {
		in->disp = (int64_t)(ci->address + ci->size + (uint64_t)m->disp);
		return in->index == REG_NONE ? 0 : -1;
	}
	return emu_addr_reg(m->base, &in->base);
}

/* Fills *ref for one operand, which must be in->size bytes wide. */
static int
emu_prep_opd(struct jt_insn *in, const cs_insn *ci, const cs_x86_op *op, uint8_t *ref)
{
	unsigned int size = op->size;

	switch (op->type) {
	case X86_OP_REG:
		*ref = emu_reg_ref(op->reg, &size);
		if (*ref == OPD_NONE)
			return -1;
		break;
	case X86_OP_IMM:
		in->imm = op->imm;
		*ref = OPD_IMM;
		break;
	case X86_OP_MEM:
		*ref = OPD_MEM;
		if (emu_prep_mem(in, ci, &op->mem) < 0)
			return -1;
		break;
	default:
		return -1;
	}
	return size == in->size ? 0 : -1;
}

/*
 * Two-operand forms: mov, lea and the arithmetic. Only mov may write memory,
 * and cmp and test read it. A read-modify-write of memory (add [rip+x], 1) is
 * left to the CPU: emulated, it would become a read and a later write, and
 * another thread of the target could store in between and lose its update.
 */
static int
emu_prep_binary(struct jt_insn *in, const cs_insn *ci, enum emu_op op)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->op_count != 2)
		return -1;
	in->op = op;
	in->size = x->operands[0].size;
	if (emu_prep_opd(in, ci, &x->operands[0], &in->dst) < 0 ||
	    emu_prep_opd(in, ci, &x->operands[1], &in->src) < 0)
		return -1;
	if (in->dst == OPD_IMM)
		return -1;
	if (op == EMU_LEA) {
		in->seg = 0;	/* lea computes the offset only */
		return in->src == OPD_MEM ? 0 : -1;
	}
	if (in->dst == OPD_MEM && op != EMU_MOV && op != EMU_CMP && op != EMU_TEST)
		return -1;
	return 0;
}

/*
 * One-operand forms whose operand is a 64-bit value: push, pop, and the
 * jumps and calls (whose immediate capstone already made an absolute target).
 * With a 0x66 prefix these would move 16 bits, which we do not emulate.
 */
static int
emu_prep_unary(struct jt_insn *in, const cs_insn *ci, enum emu_op op)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->op_count != 1 || x->prefix[2] == X86_PREFIX_OPSIZE)
		return -1;
	in->op = op;
	in->size = 8;
	if (emu_prep_opd(in, ci, &x->operands[0], &in->src) < 0)
		return -1;
	if (op == EMU_POP) {
		in->dst = in->src;
		in->src = OPD_NONE;
		return in->dst < 16 ? 0 : -1;
	}
	return 0;
}

static int
emu_prep_ret(struct jt_insn *in, const cs_insn *ci)
{
	const cs_x86 *x = &ci->detail->x86;

	if (x->prefix[2] == X86_PREFIX_OPSIZE || x->op_count > 1)
		return -1;
	in->op = EMU_RET;
	in->imm = 0;
	if (x->op_count == 1) {
		if (x->operands[0].type != X86_OP_IMM)
			return -1;
		in->imm = x->operands[0].imm & 0xffff;
	}
	return 0;
}

static int
emu_prep_jcc(struct jt_insn *in, const cs_insn *ci)
{
	for (int cc = 0; cc < 16; cc++)
		if (emu_cs_jcc[cc] == ci->id) {
			in->cond = (uint8_t)cc;
			return emu_prep_unary(in, ci, EMU_JCC) == 0 && in->src == OPD_IMM ? 0 : -1;
		}
	return -1;
}

/*
 * Fills the private part of in from ci; returns -1 when emu_exec could not run
 * it exactly. A lock prefix is refused outright. rep and repne need no check:
 * where they change the meaning, capstone gives the instruction its own id
 * (pause, endbr64, tzcnt, the string ops), and on the ones emulated here the
 * CPU ignores them (bnd jmp, rep ret).
 */
static int
emu_prepare(struct jt_insn *in, const cs_insn *ci)
{
	in->dst = in->src = OPD_NONE;
	in->base = in->index = REG_NONE;
	if (ci->detail->x86.prefix[0] == X86_PREFIX_LOCK)
		return -1;
	switch (ci->id) {
	case X86_INS_NOP:
	case X86_INS_ENDBR64:
		in->op = EMU_NOP;
		return 0;
	case X86_INS_PUSH:	return emu_prep_unary(in, ci, EMU_PUSH);
	case X86_INS_POP:	return emu_prep_unary(in, ci, EMU_POP);
	case X86_INS_JMP:	return emu_prep_unary(in, ci, EMU_JMP);
	case X86_INS_CALL:	return emu_prep_unary(in, ci, EMU_CALL);
	case X86_INS_RET:	return emu_prep_ret(in, ci);
	case X86_INS_MOV:
	case X86_INS_MOVABS:	return emu_prep_binary(in, ci, EMU_MOV);
	case X86_INS_LEA:	return emu_prep_binary(in, ci, EMU_LEA);
	case X86_INS_ADD:	return emu_prep_binary(in, ci, EMU_ADD);
	case X86_INS_SUB:	return emu_prep_binary(in, ci, EMU_SUB);
	case X86_INS_AND:	return emu_prep_binary(in, ci, EMU_AND);
	case X86_INS_OR:	return emu_prep_binary(in, ci, EMU_OR);
	case X86_INS_XOR:	return emu_prep_binary(in, ci, EMU_XOR);
	case X86_INS_CMP:	return emu_prep_binary(in, ci, EMU_CMP);
	case X86_INS_TEST:	return emu_prep_binary(in, ci, EMU_TEST);
	default:		return emu_prep_jcc(in, ci);
	}
}

int
emu_decode(struct jt_insn *insn, uint64_t addr, const uint8_t *code, size_t len)
{
	cs_insn *ci;
	size_t n;
	csh h;

	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	memcpy(insn->bytes, code, len < sizeof(insn->bytes) ? len : sizeof(insn->bytes));
	if (emu_handle(&h) < 0)
		return -1;
	n = cs_disasm(h, code, len, addr, 1, &ci);
	if (n == 0)
		return -1;
	insn->len = (uint8_t)ci->size;
	if (emu_prepare(insn, ci) == 0) {
		insn->supported = 1;
	} else {
		/* Leave nothing half-prepared behind for emu_exec to trip over. */
		memset(&insn->op, 0, sizeof(*insn) - offsetof(struct jt_insn, op));
	}
	cs_free(ci, n);
	return 0;
}

const char *
emu_describe(const struct jt_insn *insn, char *buf, size_t size)
{
	cs_insn *ci;
	size_t n = 0;
	csh h;

	if (size == 0)
		return buf;
	if (emu_handle(&h) == 0)
		n = cs_disasm(h, insn->bytes, insn->len, insn->addr, 1, &ci);
	if (n == 0) {
		snprintf(buf, size, "%#llx: (undecodable)", (unsigned long long)insn->addr);
		return buf;
	}
	snprintf(buf, size, "%#llx: %s%s%s%s", (unsigned long long)insn->addr, ci->mnemonic,
		 ci->op_str[0] ? " " : "", ci->op_str, insn->supported ? "" : " (not emulated)");
	cs_free(ci, n);
	return buf;
}
