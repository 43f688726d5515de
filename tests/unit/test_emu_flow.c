/* test_emu_flow.c - checks push, pop, jumps, calls, returns and conditional branches against the real CPU, single-stepping a traced child. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu_test.h"

static void
test_push_pop(void)
{
	struct user_regs_struct r;
	uint8_t b[3];

	for (int op = 0x50; op <= 0x58; op += 8) {
		for (int reg = 0; reg < 16; reg++)
			for (int k = 0; k < 8; k++) {
				size_t n = 0;

				r = regs_random();
				if (reg >= 8)
					b[n++] = 0x41;
				b[n++] = (uint8_t)(op + (reg & 7));
				check(b, n, r);
			}
		grp_end("%s r64, all 16 registers", op == 0x50 ? "push" : "pop");
	}
	for (size_t i = 0; i < NVALS; i++) {
		uint8_t p[5] = { 0x68 };
		uint32_t v = (uint32_t)vals[i];

		r = regs_random();
		b[0] = 0x6a, b[1] = (uint8_t)vals[i];
		check(b, 2, r);
		memcpy(p + 1, &v, 4);
		check(p, 5, r);
	}
	grp_end("push imm8, push imm32");
	for (int k = 0; k < 64; k++) {
		uint64_t v = rng_val();

		r = regs_random();
		image_put(D1 + 0x40, &v, 8);
		reg_set(&r, 3, 8, D1);
		check_enc(0, 0xff, DIGIT(6), RMMEM(3, -1, 1, 0x40), 0, 0, r);
		check_enc(0, 0xff, DIGIT(6), RMRIP(D1 + 0x40), 0, 0, r);
		check_enc(0, 0xff, DIGIT(6), RMMEM(4, -1, 1, 0x10), 0, 0, r);	/* push [rsp+16] */
	}
	grp_end("push qword [mem], push qword [rip+disp], push [rsp+disp]");
}

/* A canonical user address for indirect branch targets (others fault on the CPU, see emu.c). */
static uint64_t
rng_target(void)
{
	return rng_next() & 0x7ffffffff000ULL;
}

/*
 * rel, or -rel when a branch of up to 6 bytes at AT would land on a
 * non-canonical address: that happens when the arena lies within 2 GiB of
 * the top of user space (with ASLR off, setarch -R), and then Intel faults
 * at the branch, AMD at the target, and a CPU with 57-bit addresses not at
 * all.
 */
static int32_t
rel_canonical(int32_t rel)
{
	return addr_canonical(AT + 6 + (uint64_t)(int64_t)rel) ? rel : -rel;
}

static void
test_branches(void)
{
	static const int32_t rels[] = { 0, 1, -2, 0x7f, -0x80, 0x1000, -0x1000, 0x7ffff000, -0x7ffff000 };

	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++) {
		int32_t rel = rel_canonical(rels[i]);
		uint8_t b[6];

		b[0] = 0xeb, b[1] = (uint8_t)rel;
		check(b, 2, regs_random());
		b[0] = 0xe9, memcpy(b + 1, &rel, 4);
		check(b, 5, regs_random());
		b[0] = 0xe8;
		check(b, 5, regs_random());
		b[0] = 0xf2, b[1] = 0xe9, memcpy(b + 2, &rel, 4);	/* bnd jmp */
		check(b, 6, regs_random());
	}
	grp_end("jmp rel8/rel32, call rel32, bnd jmp");
	for (int k = 0; k < 64; k++) {
		static const uint8_t ret[] = { 0xc3 }, rep_ret[] = { 0xf3, 0xc3 }, bnd_ret[] = { 0xf2, 0xc3 };
		static const uint8_t notrack[] = { 0x3e, 0xff, 0xe0 };	/* notrack jmp rax */
		uint8_t reti[3] = { 0xc2, (uint8_t)(k * 8), (uint8_t)(k & 1 ? 0xff : 0) };
		uint64_t t = rng_target();
		struct user_regs_struct r = regs_random();

		image_put(r.rsp, &t, 8);
		image_put(D1 + 0x40, &t, 8);
		check(ret, 1, r);
		check(rep_ret, 2, r);
		check(bnd_ret, 2, r);
		check(reti, 3, r);
		reg_set(&r, 0, 8, t);
		if (k % 16 != 4) {
			reg_set(&r, k % 16, 8, t);
			check_enc(0, 0xff, DIGIT(4), RMREG(k % 16), 0, 0, r);	/* jmp r */
			check_enc(0, 0xff, DIGIT(2), RMREG(k % 16), 0, 0, r);	/* call r */
		}
		check(notrack, 3, r);
		check_enc(0, 0xff, DIGIT(4), RMRIP(D1 + 0x40), 0, 0, r);	/* jmp [rip] */
		check_enc(0, 0xff, DIGIT(2), RMRIP(D1 + 0x40), 0, 0, r);	/* call [rip] */
		check_enc(0, 0xff, DIGIT(2), RMMEM(4, -1, 1, 0), 0, 0, r);	/* call [rsp] */
	}
	grp_end("ret, ret imm16, jmp/call via register and memory");
}

/* Every condition against all 64 combinations of the arithmetic flags. */
static void
test_jcc(void)
{
	static const unsigned long long flag[6] = { X86_FL_CF, X86_FL_PF, X86_FL_AF, X86_FL_ZF, X86_FL_SF, X86_FL_OF };
	static const char *const names[16] = { "jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
					       "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg" };

	for (int cc = 0; cc < 16; cc++) {
		for (int f = 0; f < 64; f++) {
			struct user_regs_struct r = regs_random();
			uint8_t b8[2] = { (uint8_t)(0x70 + cc), (uint8_t)(f & 1 ? 0x10 : 0xe0) };
			uint8_t b32[6] = { 0x0f, (uint8_t)(0x80 + cc) };
			int32_t rel = f & 2 ? 0x12345 : -0x1000;

			r.eflags = FL_BASE;
			for (int i = 0; i < 6; i++)
				if (f & (1 << i))
					r.eflags |= flag[i];
			memcpy(b32 + 2, &rel, 4);
			check(b8, 2, r);
			check(b32, 6, r);
		}
		grp_end("%s rel8/rel32 under all flag combinations", names[cc]);
	}
}

int
main(void)
{
	emu_start(emu_setup);
	test_push_pop();
	test_branches();
	test_jcc();
	return emu_done();
}
