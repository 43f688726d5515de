/* emu.c - decodes an allocator's first instruction once, then replays it on a stopped thread's registers. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include "arch.h"
#include "emu.h"

/*
 * Operand references in jt_insn.dst and .src: 0-15 name a general register in
 * the order the x86 encoding numbers them (rax, rcx, rdx, rbx, rsp, rbp, rsi,
 * rdi, r8-r15), read and written at jt_insn.size. OPD_HIGH8 marks ah, ch, dh
 * and bh, which live in bits 8-15 of registers 0-3.
 */
#define OPD_HIGH8	0x10
#define OPD_IMM		0x40	/* jt_insn.imm */
#define OPD_MEM		0x41	/* jt_insn.seg:[base + index * scale + disp] */
#define OPD_NONE	0xff
#define REG_NONE	0xff

#define SEG_FS		1
#define SEG_GS		2

/* jt_insn.op. EMU_NONE (0) is what an unsupported instruction keeps. */
enum emu_op {
	EMU_NONE, EMU_NOP, EMU_MOV, EMU_LEA,
	EMU_ADD, EMU_SUB, EMU_AND, EMU_OR, EMU_XOR, EMU_CMP, EMU_TEST,	/* set the flags */
	EMU_PUSH, EMU_POP, EMU_JMP, EMU_JCC, EMU_CALL, EMU_RET,		/* emu_flow */
};

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

/* Where each register, by x86 number, sits in struct user_regs_struct. */
#define EMU_OFF(f)	offsetof(struct user_regs_struct, f)
static const size_t emu_reg_off[16] = {
	EMU_OFF(rax), EMU_OFF(rcx), EMU_OFF(rdx), EMU_OFF(rbx), EMU_OFF(rsp), EMU_OFF(rbp),
	EMU_OFF(rsi), EMU_OFF(rdi), EMU_OFF(r8), EMU_OFF(r9), EMU_OFF(r10), EMU_OFF(r11),
	EMU_OFF(r12), EMU_OFF(r13), EMU_OFF(r14), EMU_OFF(r15),
};

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

static int
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

/* Execution: no capstone from here on. */

static uint64_t
emu_mask(unsigned int size)
{
	return size >= 8 ? ~0ULL : (1ULL << (8 * size)) - 1;
}

static unsigned long long *
emu_gpr(struct user_regs_struct *r, unsigned int num)
{
	return (unsigned long long *)((char *)r + emu_reg_off[num & 15]);
}

static uint64_t
emu_reg_get(struct user_regs_struct *r, uint8_t ref, unsigned int size)
{
	if (ref & OPD_HIGH8)
		return (*emu_gpr(r, (ref & 15) - 4) >> 8) & 0xff;
	return *emu_gpr(r, ref) & emu_mask(size);
}

/* Writes as the CPU does: 32-bit results zero the upper half, 8- and 16-bit ones merge. */
static void
emu_reg_set(struct user_regs_struct *r, uint8_t ref, unsigned int size, uint64_t v)
{
	unsigned long long *p;

	if (ref & OPD_HIGH8) {
		p = emu_gpr(r, (ref & 15) - 4);
		*p = (*p & ~0xff00ULL) | ((v & 0xff) << 8);
		return;
	}
	p = emu_gpr(r, ref);
	if (size == 4)
		*p = (uint32_t)v;
	else if (size < 4)
		*p = (*p & ~emu_mask(size)) | (v & emu_mask(size));
	else
		*p = v;
}

static uint64_t
emu_ea(const struct jt_insn *in, struct user_regs_struct *r)
{
	uint64_t a = (uint64_t)in->disp;

	if (in->base != REG_NONE)
		a += *emu_gpr(r, in->base);
	if (in->index != REG_NONE)
		a += *emu_gpr(r, in->index) * in->scale;
	if (in->seg == SEG_FS)
		a += r->fs_base;
	else if (in->seg == SEG_GS)
		a += r->gs_base;
	return a;
}

/* Reads operand ref at insn's size; the only failure is a memory read. */
static int
emu_load(const struct jt_insn *in, struct user_regs_struct *r, uint8_t ref,
	 const struct jt_mem_ops *mem, uint64_t *v)
{
	uint64_t x = 0;

	if (ref == OPD_IMM) {
		*v = (uint64_t)in->imm & emu_mask(in->size);
		return 0;
	}
	if (ref != OPD_MEM) {
		*v = emu_reg_get(r, ref, in->size);
		return 0;
	}
	/* Little-endian: the low in->size bytes of x are the operand. */
	if (mem->read(mem->arg, emu_ea(in, r), &x, in->size) < 0)
		return -1;
	*v = x;
	return 0;
}

static int
emu_store(const struct jt_insn *in, struct user_regs_struct *r, uint8_t ref,
	  const struct jt_mem_ops *mem, uint64_t v)
{
	if (ref == OPD_MEM)
		return mem->write(mem->arg, emu_ea(in, r), &v, in->size);
	emu_reg_set(r, ref, in->size, v);
	return 0;
}

/*
 * The result of an arithmetic op, with its flags merged into *eflags. For the
 * logical ops AF is architecturally undefined; Intel and AMD CPUs clear it,
 * and the differential unit test checks that against the machine it runs on.
 */
static uint64_t
emu_alu(uint8_t op, unsigned int size, uint64_t a, uint64_t b, unsigned long long *eflags)
{
	uint64_t m = emu_mask(size), sign = 1ULL << (8 * size - 1), r, f = 0;

	switch (op) {
	case EMU_ADD:
		r = (a + b) & m;
		f |= (r < a ? X86_FL_CF : 0) | ((a ^ r) & (b ^ r) & sign ? X86_FL_OF : 0);
		f |= (a ^ b ^ r) & X86_FL_AF;
		break;
	case EMU_SUB:
	case EMU_CMP:
		r = (a - b) & m;
		f |= (a < b ? X86_FL_CF : 0) | ((a ^ b) & (a ^ r) & sign ? X86_FL_OF : 0);
		f |= (a ^ b ^ r) & X86_FL_AF;
		break;
	case EMU_OR:
		r = a | b;
		break;
	case EMU_XOR:
		r = a ^ b;
		break;
	default:	/* and, test */
		r = a & b;
		break;
	}
	f |= (r == 0 ? X86_FL_ZF : 0) | (r & sign ? X86_FL_SF : 0);
	f |= __builtin_parityll(r & 0xff) ? 0 : X86_FL_PF;
	*eflags = (*eflags & ~(unsigned long long)X86_FL_ARITH) | f;
	return r;
}

static int
emu_arith(const struct jt_insn *in, struct user_regs_struct *r, const struct jt_mem_ops *mem)
{
	uint64_t a, b, res;

	if (emu_load(in, r, in->dst, mem, &a) < 0 || emu_load(in, r, in->src, mem, &b) < 0)
		return -1;
	res = emu_alu(in->op, in->size, a, b, &r->eflags);
	if (in->op == EMU_CMP || in->op == EMU_TEST)
		return 0;
	return emu_store(in, r, in->dst, mem, res);
}

/* Evaluates condition code cc (the opcode's low nibble); odd codes negate even ones. */
static int
emu_cond(unsigned int cc, unsigned long long fl)
{
	int sf_ne_of = !(fl & X86_FL_SF) != !(fl & X86_FL_OF);
	int t;

	switch (cc >> 1) {
	case 0:  t = !!(fl & X86_FL_OF); break;
	case 1:  t = !!(fl & X86_FL_CF); break;
	case 2:  t = !!(fl & X86_FL_ZF); break;
	case 3:  t = !!(fl & (X86_FL_CF | X86_FL_ZF)); break;
	case 4:  t = !!(fl & X86_FL_SF); break;
	case 5:  t = !!(fl & X86_FL_PF); break;
	case 6:  t = sf_ne_of; break;
	default: t = (fl & X86_FL_ZF) || sf_ne_of; break;
	}
	return cc & 1 ? !t : t;
}

static int
emu_push(struct user_regs_struct *r, const struct jt_mem_ops *mem, uint64_t v)
{
	if (mem->write(mem->arg, r->rsp - 8, &v, 8) < 0)
		return -1;
	r->rsp -= 8;
	return 0;
}

static int
emu_pop(struct user_regs_struct *r, const struct jt_mem_ops *mem, uint64_t *v)
{
	if (mem->read(mem->arg, r->rsp, v, 8) < 0)
		return -1;
	r->rsp += 8;
	return 0;
}

/*
 * Stack and control flow. The operand is read before rsp moves, as push rsp
 * and call [rsp] need. Faults are not modelled: a jump to a non-canonical
 * address traps at the target once resumed, rather than at the jump.
 */
static int
emu_flow(const struct jt_insn *in, struct user_regs_struct *r, const struct jt_mem_ops *mem)
{
	uint64_t v = 0;

	if (in->src != OPD_NONE && emu_load(in, r, in->src, mem, &v) < 0)
		return -1;
	switch (in->op) {
	case EMU_PUSH:
		return emu_push(r, mem, v);
	case EMU_POP:
		/* pop rsp: the loaded value wins over the increment. */
		if (emu_pop(r, mem, &v) < 0)
			return -1;
		emu_reg_set(r, in->dst, 8, v);
		return 0;
	case EMU_JMP:
		r->rip = v;
		return 0;
	case EMU_JCC:
		if (emu_cond(in->cond, r->eflags))
			r->rip = v;
		return 0;
	case EMU_CALL:
		if (emu_push(r, mem, in->addr + in->len) < 0)
			return -1;
		r->rip = v;
		return 0;
	default:	/* ret [imm16] */
		if (emu_pop(r, mem, &v) < 0)
			return -1;
		r->rsp += (uint64_t)in->imm;
		r->rip = v;
		return 0;
	}
}

/* Works on a copy so that a failed memory access leaves *regs as it was. */
int
emu_exec(const struct jt_insn *insn, struct user_regs_struct *regs, const struct jt_mem_ops *mem)
{
	struct user_regs_struct r;
	uint64_t v;
	int ret = 0;

	if (!insn->supported)
		return -1;
	r = *regs;
	r.rip = insn->addr + insn->len;
	switch (insn->op) {
	case EMU_NOP:
		break;
	case EMU_MOV:
		ret = emu_load(insn, &r, insn->src, mem, &v);
		if (ret == 0)
			ret = emu_store(insn, &r, insn->dst, mem, v);
		break;
	case EMU_LEA:
		emu_reg_set(&r, insn->dst, insn->size, emu_ea(insn, &r));
		break;
	case EMU_ADD: case EMU_SUB: case EMU_AND: case EMU_OR:
	case EMU_XOR: case EMU_CMP: case EMU_TEST:
		ret = emu_arith(insn, &r, mem);
		break;
	default:
		ret = emu_flow(insn, &r, mem);
		break;
	}
	if (ret == 0)
		*regs = r;
	return ret < 0 ? -1 : 0;
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
