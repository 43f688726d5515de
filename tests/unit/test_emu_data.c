/* test_emu_data.c - checks mov, lea and the two-operand arithmetic against the real CPU, single-stepping a traced child. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu_test.h"

/* mov between all register pairs, both directions, at one size. */
static void
test_mov_rr(int size)
{
	int nregs = size == 1 ? 20 : 16;

	for (int d = 0; d < nregs; d++)
		for (int s = 0; s < nregs; s++) {
			check_enc(size, size == 1 ? 0x88 : 0x89, s, RMREG(d), 0, 0, regs_random());
			check_enc(size, size == 1 ? 0x8a : 0x8b, d, RMREG(s), 0, 0, regs_random());
		}
	grp_end("mov r%d, r%d: all register pairs, both encodings", size * 8, size * 8);
}

static void
test_mov_imm(void)
{
	for (int reg = 0; reg < 20; reg++)
		for (size_t i = 0; i < NVALS; i++) {
			struct user_regs_struct r = regs_random();
			uint64_t v = vals[i];
			uint8_t b[11];
			size_t n = 0;

			if (reg >= 16) {
				b[n++] = (uint8_t)(0xb4 + reg - 16), b[n++] = (uint8_t)v;	/* mov ah, imm8 */
				check(b, n, r);
				continue;
			}
			if (reg >= 8 || (reg >= 4 && reg < 8))
				b[n++] = reg >= 8 ? 0x41 : 0x40;
			b[n++] = (uint8_t)(0xb0 + (reg & 7)), b[n++] = (uint8_t)v;
			check(b, n, r);						/* mov r8, imm8 */
			n = 0;
			if (reg >= 8)
				b[n++] = 0x41;
			b[n++] = (uint8_t)(0xb8 + (reg & 7));
			memcpy(b + n, &v, 4);
			check(b, n + 4, r);					/* mov r32, imm32 */
			b[0] = reg >= 8 ? 0x49 : 0x48, b[1] = (uint8_t)(0xb8 + (reg & 7));
			memcpy(b + 2, &v, 8);
			check(b, 10, r);					/* movabs r64, imm64 */
			check_enc(8, 0xc7, DIGIT(0), RMREG(reg), 4, v, r);	/* mov r64, simm32 */
			check_enc(4, 0xc7, DIGIT(0), RMREG(reg), 4, v, r);
			check_enc(2, 0xc7, DIGIT(0), RMREG(reg), 2, v, r);
			check_enc(1, 0xc6, DIGIT(0), RMREG(reg), 1, v, r);
		}
	grp_end("mov r, imm: b0/b8/movabs/c6/c7 forms, 8-64 bit");
}

/* mov loads, stores and immediate stores through every base and random indexes. */
static void
test_mov_mem(void)
{
	static const int64_t disps[] = { 0, 8, -8, 0x7f, -0x80, 0x100, -0x1f8 };

	for (int size = 1; size <= 8; size *= 2)
		for (int base = -1; base < 16; base++)
			for (int k = 0; k < 14; k++) {
				int index = k & 1 && base >= 0 ? -1 : (int)(rng_next() % 16);
				int scale = base < 0 ? 1 : 1 << (rng_next() % 4);
				int reg = (int)(rng_next() % (size == 1 ? 20 : 16)), r16 = reg - 16;
				struct rm m;

				if (index == 4 || index == base)
					index = base < 0 ? 0 : -1;
				if (reg == base || reg == index || r16 == base || r16 == index)
					continue;	/* keep the address registers intact for the CPU */
				m = RMMEM(base, index, scale, disps[k % 7]);
				check_enc(size, size == 1 ? 0x8a : 0x8b, reg, m, 0, 0, regs_mem(base, index));
				check_enc(size, size == 1 ? 0x88 : 0x89, reg, m, 0, 0, regs_mem(base, index));
				check_enc(size, size == 1 ? 0xc6 : 0xc7, DIGIT(0), m, size > 4 ? 4 : size, rng_val(),
					  regs_mem(base, index));
			}
	grp_end("mov loads and stores, [base+index*scale+disp], 8-64 bit");
}

/* mov with rip-relative, fs:, gs: and 64-bit absolute (moffs) operands. */
static void
test_mov_special(void)
{
	for (int k = 0; k < 64; k++) {
		struct user_regs_struct r = regs_random();
		uint64_t neg = D0 + 0x10 + (uint64_t)k * 8, pos = D1 + 0x300 + (uint64_t)k * 8;

		check_enc(8, 0x8b, k % 16, RMRIP(neg), 0, 0, r);
		check_enc(4, 0x8b, k % 16, RMRIP(pos), 0, 0, r);
		check_enc(8, 0x89, k % 16, RMRIP(pos), 0, 0, r);
		check_enc(1, 0xc6, DIGIT(0), RMRIP(neg), 1, rng_val(), r);
	}
	grp_end("mov with [rip+disp], both signs of disp");
	for (int k = 0; k < 16; k++) {
		static const uint8_t fs0[] = { 0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0 };	/* mov rax, fs:[0] */
		static const uint8_t fs10[] = { 0x64, 0x8b, 0x0c, 0x25, 0x10, 0, 0, 0 };	/* mov ecx, fs:[0x10] */
		static const uint8_t gsrbx[] = { 0x65, 0x48, 0x8b, 0x03 };			/* mov rax, gs:[rbx] */
		static const uint8_t moffs_ops[][2] = { { 0x48, 0xa1 }, { 0x48, 0xa3 }, { 0x90, 0xa0 } };
		uint64_t a = D1 + (uint64_t)k * 8;
		struct user_regs_struct r = regs_random();

		check(fs0, sizeof(fs0), r);
		check(fs10, sizeof(fs10), r);
		reg_set(&r, 3, 8, a);
		if (kid.base.gs_base == 0)	/* then gs:[rbx] is plain [rbx] */
			check(gsrbx, sizeof(gsrbx), r);
		/* movabs rax, [a]; movabs [a], rax; movabs al, [a] (without REX, after a 0x90 we skip) */
		for (int i = 0; i < 3; i++) {
			uint8_t b[10];

			memcpy(b, moffs_ops[i], 2);
			memcpy(b + 2, &a, 8);
			check(b + (b[0] == 0x90), 10 - (b[0] == 0x90), r);
		}
	}
	grp_end("mov with fs:, gs: and moffs64 operands");
}

static void
test_lea(void)
{
	static const int64_t disps[] = { 0, 1, -1, 0x7f, -0x80, 0x1000, -0x12345678, 0x7fffffff };

	for (int size = 2; size <= 8; size *= 2) {
		for (int base = -1; base < 16; base++)
			for (int index = -1; index < 16; index++) {
				if (index == 4)
					continue;
				for (int k = 0; k < 3; k++) {
					int scale = 1 << (rng_next() % 4);
					int64_t disp = disps[rng_next() % 8];

					check_enc(size, 0x8d, (int)(rng_next() % 16), RMMEM(base, index, scale, disp), 0, 0,
						  regs_random());
				}
			}
		for (int k = 0; k < 32; k++) {
			int64_t off = (int64_t)(rng_next() % 0x7fff0000) - 0x3fff0000;

			check_enc(size, 0x8d, k % 16, RMRIP(AT + (uint64_t)off), 0, 0, regs_random());
		}
		grp_end("lea r%d, [base+index*scale+disp] and [rip+disp]", size * 8);
	}
	for (int k = 0; k < 16; k++) {
		/* A segment override does not reach lea: it yields the offset alone. */
		static const uint8_t fs[] = { 0x64, 0x48, 0x8d, 0x04, 0x25, 0x10, 0, 0, 0 };	/* lea rax, fs:[0x10] */
		static const uint8_t gs[] = { 0x65, 0x48, 0x8d, 0x43, 0x08 };		/* lea rax, gs:[rbx+8] */

		check(fs, sizeof(fs), regs_random());
		check(gs, sizeof(gs), regs_random());
	}
	grp_end("lea with fs: and gs: overrides");
}

/* The two-operand arithmetic ops: the r/m,r opcode (8-bit), the /digit of the immediate forms, al,imm8. */
static const struct aluop {
	const char *name;
	uint8_t op8;
	int digit;
	uint8_t acc8;
} aluops[] = {
	{ "add", 0x00, 0, 0x04 }, { "or", 0x08, 1, 0x0c }, { "and", 0x20, 4, 0x24 },
	{ "sub", 0x28, 5, 0x2c }, { "xor", 0x30, 6, 0x34 }, { "cmp", 0x38, 7, 0x3c },
	{ "test", 0x84, 0, 0xa8 },
};
#define NALU (sizeof(aluops) / sizeof(aluops[0]))

static int
is_test(const struct aluop *a)
{
	return a->op8 == 0x84;
}

/* op r, r: every pair of interesting values, then every pair of registers. */
static void
test_alu_rr(const struct aluop *a, int size)
{
	unsigned int opc = a->op8 + (size > 1);
	int nregs = size == 1 ? 20 : 16;

	for (size_t i = 0; i < NVALS; i++)
		for (size_t j = 0; j < NVALS; j++) {
			struct user_regs_struct r = regs_random();

			reg_set(&r, 3, size, vals[i]);
			reg_set(&r, 9, size, vals[j]);
			check_enc(size, opc, 9, RMREG(3), 0, 0, r);
			if (!is_test(a) && (i + j) % 3 == 0)
				check_enc(size, opc + 2, 3, RMREG(9), 0, 0, r);	/* the reg, r/m direction */
		}
	for (int d = 0; d < nregs; d++)
		for (int s = 0; s < nregs; s++)
			check_enc(size, opc, s, RMREG(d), 0, 0, regs_random());
	grp_end("%s r%d, r%d", a->name, size * 8, size * 8);
}

static const uint64_t imm8s[] = { 0, 1, 2, 0x0f, 0x10, 0x7f, 0x80, 0x81, 0xf0, 0xfe, 0xff };
static const uint64_t imm32s[] = { 0, 1, 0x7f, 0x80, 0xffff, 0x8000, 0x7fffffff, 0x80000000,
				   0xffffffff, 0x12345678, 0xfffffff0 };
#define NIMM (sizeof(imm8s) / sizeof(imm8s[0]))

/* One value pair through every immediate encoding of op at one register. */
static void
check_alu_imm(const struct aluop *a, int reg, uint64_t v, size_t k)
{
	struct user_regs_struct r = regs_random();
	int d = is_test(a) ? DIGIT(0) : DIGIT(a->digit);
	unsigned int op81 = is_test(a) ? 0xf7 : 0x81, op80 = is_test(a) ? 0xf6 : 0x80;

	for (int size = 1; size <= 8; size *= 2)
		reg_set(&r, reg, size, v);
	check_enc(1, op80, d, RMREG(reg), 1, imm8s[k], r);
	check_enc(2, op81, d, RMREG(reg), 2, imm32s[k], r);
	check_enc(4, op81, d, RMREG(reg), 4, imm32s[k], r);
	check_enc(8, op81, d, RMREG(reg), 4, imm32s[k], r);
	if (is_test(a))
		return;
	for (int size = 2; size <= 8; size *= 2)
		check_enc(size, 0x83, d, RMREG(reg), 1, imm8s[k], r);
}

static void
test_alu_imm(const struct aluop *a)
{
	static const int regs[] = { 0, 1, 3, 4, 5, 7, 8, 12, 15, 16, 19 };

	/* Every value against every immediate, rotating through the registers. */
	for (size_t i = 0; i < NVALS; i++)
		for (size_t k = 0; k < NIMM; k++)
			check_alu_imm(a, regs[(i * NIMM + k) % (sizeof(regs) / sizeof(regs[0]))], vals[i], k);
	grp_end("%s r, imm: 80/81/83 (or f6/f7) forms, 8-64 bit", a->name);
	for (size_t i = 0; i < NVALS; i++)
		for (size_t k = 0; k < NIMM; k++) {
			struct user_regs_struct r = regs_random();
			uint8_t b[8];

			r.rax = vals[i] ^ (rng_next() & ~0xffffffffULL);
			b[0] = a->acc8, b[1] = (uint8_t)imm8s[k];
			check(b, 2, r);
			b[0] = 0x66, b[1] = a->acc8 + 1;
			memcpy(b + 2, &imm32s[k], 2);
			check(b, 4, r);
			b[0] = 0x48;
			memcpy(b + 2, &imm32s[k], 4);
			check(b, 6, r);
			check(b + 1, 5, r);
		}
	grp_end("%s al/ax/eax/rax, imm (short forms)", a->name);
}

/* Arithmetic with a memory operand: op r, [mem] for all; op [mem], r and op [mem], imm for cmp/test. */
static void
test_alu_mem(const struct aluop *a)
{
	int d = is_test(a) ? DIGIT(0) : DIGIT(a->digit);
	unsigned int op81 = is_test(a) ? 0xf7 : 0x81, op80 = is_test(a) ? 0xf6 : 0x80;
	int ro = !is_test(a) && a->op8 != 0x38;	/* writes its destination */

	for (size_t i = 0; i < NVALS; i++)
		for (size_t j = i & 1; j < NVALS; j += 2) {
			struct user_regs_struct r = regs_mem(3, 6);
			uint64_t addr = D1 + 0x200 + *reg_ptr(&r, 6) * 4 + 0x10, v = vals[j];

			image_put(addr, &v, 8);
			for (int size = 1; size <= 8; size *= 2) {
				reg_set(&r, 9, size, vals[i]);
				if (!is_test(a))
					check_enc(size, a->op8 + 2 + (size > 1), 9, RMMEM(3, 6, 4, 0x10), 0, 0, r);
				if (ro)
					continue;
				check_enc(size, a->op8 + (size > 1), 9, RMMEM(3, 6, 4, 0x10), 0, 0, r);
				check_enc(size, size == 1 ? op80 : op81, d, RMMEM(3, 6, 4, 0x10),
					  size == 8 ? 4 : size, imm32s[j % NIMM], r);
				check_enc(size, size == 1 ? op80 : op81, d, RMRIP(addr), size == 8 ? 4 : size,
					  imm32s[i % NIMM], r);
				if (!is_test(a) && size > 1)
					check_enc(size, 0x83, d, RMRIP(addr), 1, imm8s[i % NIMM], r);
			}
		}
	grp_end("%s with memory operands (rip-relative and base+index*scale+disp)", a->name);
}

/* glibc's `cmpb $0x0,disp(%rip)` and friends, with negative displacements too. */
static void
test_cmp_rip(void)
{
	for (int size = 1; size <= 8; size *= 2)
		for (size_t i = 0; i < NVALS; i++)
			for (size_t k = 0; k < NIMM; k++) {
				uint64_t addr = k & 1 ? D0 + 0x88 : D1 + 0x488;

				image_put(addr, &vals[i], 8);
				check_enc(size, size == 1 ? 0x80 : 0x81, DIGIT(7), RMRIP(addr),
					  size == 8 ? 4 : size, size == 1 ? imm8s[k] : imm32s[k], regs_random());
				if (size > 1)
					check_enc(size, 0x83, DIGIT(7), RMRIP(addr), 1, imm8s[k], regs_random());
			}
	grp_end("cmp byte/word/dword/qword [rip+disp], imm");
}

int
main(void)
{
	emu_start(emu_setup);
	for (int size = 1; size <= 8; size *= 2)
		test_mov_rr(size);
	test_mov_imm();
	test_mov_mem();
	test_mov_special();
	test_lea();
	for (size_t i = 0; i < NALU; i++) {
		for (int size = 1; size <= 8; size *= 2)
			test_alu_rr(&aluops[i], size);
		test_alu_imm(&aluops[i]);
		test_alu_mem(&aluops[i]);
	}
	test_cmp_rip();
	return emu_done();
}
