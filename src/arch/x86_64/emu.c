/* emu.c - replays a decoded allocator instruction on a stopped thread's registers, with memory through the caller's ops. */
#include <stddef.h>
#include <string.h>

#include "arch.h"
#include "emu.h"
#include "emu_insn.h"

/* Where each register, by x86 number, sits in struct user_regs_struct. */
#define EMU_OFF(f)	offsetof(struct user_regs_struct, f)
static const size_t emu_reg_off[16] = {
	EMU_OFF(rax), EMU_OFF(rcx), EMU_OFF(rdx), EMU_OFF(rbx), EMU_OFF(rsp), EMU_OFF(rbp),
	EMU_OFF(rsi), EMU_OFF(rdi), EMU_OFF(r8), EMU_OFF(r9), EMU_OFF(r10), EMU_OFF(r11),
	EMU_OFF(r12), EMU_OFF(r13), EMU_OFF(r14), EMU_OFF(r15),
};

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
