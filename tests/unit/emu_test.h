/* emu_test.h - the differential check of the test_emu_*.c tests: each case run by the emulator and by the child's CPU, compared, and tallied in groups, and a small encoder (static inline functions: one copy per test). */
#ifndef JT_EMU_TEST_H
#define JT_EMU_TEST_H

#include <stdarg.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "emu.h"
#include "emu_child.h"
#include "tap.h"

/* One outcome: what the emulator or the CPU made of the same start. */
struct result {
	struct user_regs_struct regs;
	uint8_t mem[ARENA_SIZE];
};
static struct result emu_res, cpu_res;

/*
 * A group of cases that ends in one TAP line; the first mismatch is kept for
 * diagnosis. Start states that not every x86-64 CPU would resume (invalid,
 * never run) and those this CPU would not resume (refused) are test defects,
 * not emulator mismatches: they are counted and shown apart, and fail too.
 */
struct tally {
	int cases, bad, invalid, refused;
};
static struct {
	struct tally n;
	char first[2048], first_invalid[512], first_refused[512];
} grp;
static struct tally total;	/* over all groups, for the closing check */

static const char *const reg_names[20] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ah", "ch", "dh", "bh",
};

/* ---- groups and the differential check ---- */

/* Counts one case in *count and keeps the text of the group's first one in first. */
static inline void __attribute__((format(printf, 4, 5)))
grp_note(int *count, char *first, size_t size, const char *fmt, ...)
{
	va_list ap;

	if ((*count)++ > 0)
		return;
	va_start(ap, fmt);
	vsnprintf(first, size, fmt, ap);
	va_end(ap);
}

#define grp_fail(...)	 grp_note(&grp.n.bad, grp.first, sizeof(grp.first), __VA_ARGS__)
#define grp_invalid(...) grp_note(&grp.n.invalid, grp.first_invalid, sizeof(grp.first_invalid), __VA_ARGS__)
#define grp_refused(...) grp_note(&grp.n.refused, grp.first_refused, sizeof(grp.first_refused), __VA_ARGS__)

static inline void __attribute__((format(printf, 1, 2)))
grp_end(const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	ok(grp.n.bad == 0 && grp.n.invalid == 0 && grp.n.refused == 0 && grp.n.cases > 0,
	   "%s: %d cases match the CPU", name, grp.n.cases);
	if (grp.n.bad)
		printf("# %d mismatches; first:\n%s", grp.n.bad, grp.first);
	if (grp.n.invalid)
		printf("# %d start states not valid on every x86-64 CPU, not run (a test defect); first:\n%s",
		       grp.n.invalid, grp.first_invalid);
	if (grp.n.refused)
		printf("# %d start states refused by this CPU or kernel, not an emulator mismatch; first:\n%s",
		       grp.n.refused, grp.first_refused);
	total.cases += grp.n.cases, total.invalid += grp.n.invalid, total.refused += grp.n.refused;
	memset(&grp, 0, sizeof(grp));
}

static inline const char *
insn_text(const struct jt_insn *in, char *buf, size_t size)
{
	char d[128];
	size_t n = 0;

	for (int i = 0; i < in->len && n + 4 < size; i++)
		n += snprintf(buf + n, size - n, "%02x ", in->bytes[i]);
	snprintf(buf + n, size - n, "(%s)", emu_describe(in, d, sizeof(d)));
	return buf;
}

/*
 * Describes where emu and cpu differ into buf; returns the number of
 * differences. eflags is compared whole, AF included even after the logical
 * ops, where the architecture leaves it undefined: emu.c clears it as Intel
 * and AMD CPUs do, and a CPU that did otherwise would fail here, not pass.
 */
static inline int
result_diff(const struct user_regs_struct *start, char *buf, size_t size)
{
	struct user_regs_struct e = emu_res.regs, c = cpu_res.regs;
	size_t n = 0;
	int diffs = 0;

	for (int i = 0; i < 16; i++) {
		if (*reg_ptr(&e, i) == *reg_ptr(&c, i))
			continue;
		diffs++;
		n += snprintf(buf + n, size - n, "#   %s: start %#llx emu %#llx cpu %#llx\n", reg_names[i],
			      *reg_ptr((struct user_regs_struct *)start, i), *reg_ptr(&e, i), *reg_ptr(&c, i));
	}
	if (e.rip != c.rip || e.eflags != c.eflags) {
		diffs++;
		n += snprintf(buf + n, size - n, "#   rip emu %#llx cpu %#llx; eflags start %#llx emu %#llx cpu %#llx\n",
			      e.rip, c.rip, start->eflags, e.eflags, c.eflags);
	}
	/* The rest (segments, fs_base, orig_rax) must match too; no one should touch them. */
	e.rip = c.rip, e.eflags = c.eflags;
	for (int i = 0; i < 16; i++)
		*reg_ptr(&e, i) = *reg_ptr(&c, i);
	if (memcmp(&e, &c, sizeof(e)) != 0 && size > n)
		diffs++, n += snprintf(buf + n, size - n, "#   other user_regs_struct fields differ\n");
	for (size_t i = 0; i < ARENA_SIZE; i++)
		if (emu_res.mem[i] != cpu_res.mem[i]) {
			if (size > n)
				snprintf(buf + n, size - n, "#   memory differs first at arena+%#zx: emu %02x cpu %02x\n",
					 i, emu_res.mem[i], cpu_res.mem[i]);
			diffs++;
			break;
		}
	return diffs;
}

/* Puts code at at, padded with int3s, writing to the child only what changed. */
static inline void
code_place(uint64_t at, const uint8_t *code, size_t n)
{
	uint8_t b[16];

	memset(b, 0xcc, sizeof(b));
	memcpy(b, code, n);
	if (memcmp(image + (at - arena), b, sizeof(b)) == 0)
		return;
	memcpy(image + (at - arena), b, sizeof(b));
	if (!arena_dirty && child_write(NULL, at, b, sizeof(b)) < 0)
		arena_dirty = 1;
}

/* Decodes what the child will run at at; image mirrors its arena once arena_dirty is clear. */
static inline int
check_decode(uint64_t at, const uint8_t *code, size_t n, struct jt_insn *in, char *text, size_t size)
{
	uint8_t bytes[16];

	if (code)
		memcpy(bytes, image + (at - arena), sizeof(bytes));
	else if (child_read(NULL, at, bytes, sizeof(bytes)) < 0)
		bytes[0] = 0x06;	/* invalid: fails below */
	if (emu_decode(in, at, bytes, sizeof(bytes)) < 0) {
		grp_fail("#   cannot read or decode the code at %#llx\n", (unsigned long long)at);
		return -1;
	}
	insn_text(in, text, size);
	if (!in->supported || (code && in->len != n)) {
		grp_fail("#   %s: supported %d len %d (want %zu)\n", text, in->supported, in->len, n);
		return -1;
	}
	return 0;
}

/*
 * The heart of the test: runs the instruction at at (placing code there first
 * unless it is NULL) from start, once through emu_decode/emu_exec and once on
 * the CPU, each from the same memory image, and compares everything.
 */
static inline void
check_at(uint64_t at, const uint8_t *code, size_t n, struct user_regs_struct start)
{
	char text[256], diff[1536];
	struct jt_insn in;
	const char *why;
	enum step step;
	int sig;

	grp.n.cases++;
	if (code)
		code_place(at, code, n);
	if (arena_dirty)
		arena_reset();
	if (check_decode(at, code, n, &in, text, sizeof(text)) < 0)
		return;
	start.rip = at;
	start.orig_rax = -1;
	why = start_invalid(&start);
	if (why) {
		grp_invalid("#   %s: %s (rsp %#llx, eflags %#llx)\n", text, why, start.rsp, start.eflags);
		return;
	}
	emu_res.regs = start;
	if (emu_exec(&in, &emu_res.regs, &child_ops) < 0) {
		grp_fail("#   %s: emu_exec failed\n", text);
		return;
	}
	arena_snapshot(emu_res.mem);
	if (arena_dirty)
		arena_reset();
	step = cpu_try(&start, &cpu_res.regs, &sig);
	if (step != STEP_DONE) {
		if (step == STEP_REFUSED)
			grp_refused("#   %s: stopped with signal %d before it ran, as a nop did from the same "
				    "registers (rsp %#llx, eflags %#llx)\n", text, sig, start.rsp, start.eflags);
		else
			grp_fail("#   %s: the CPU stopped with signal %d\n", text, sig);
		return;
	}
	arena_snapshot(cpu_res.mem);
	if (result_diff(&start, diff, sizeof(diff)) > 0)
		grp_fail("#   %s\n%s", text, diff);
}

static inline void
check(const uint8_t *code, size_t n, struct user_regs_struct start)
{
	check_at(AT, code, n, start);
}

/* ---- an encoder, just big enough for the forms under test ---- */

struct code {
	uint8_t b[16];
	size_t n;
};

enum { RM_REG, RM_MEM, RM_RIP };

/* The r/m operand: a register, [base + index * scale + disp] (-1: none), or [rip + target - end]. */
struct rm {
	int kind, reg, base, index, scale;
	int64_t disp;
};

#define RMREG(r)		((struct rm){ RM_REG, (r), -1, -1, 1, 0 })
#define RMMEM(b, i, s, d)	((struct rm){ RM_MEM, -1, (b), (i), (s), (d) })
#define RMRIP(target)		((struct rm){ RM_RIP, -1, -1, -1, 1, (int64_t)(target) })
#define DIGIT(n)		(0x100 | (n))	/* an opcode extension in modrm.reg */

/* A register's 3-bit field, noting the REX bits it needs. Registers 16-19 are ah..bh. */
static inline int
enc_reg(int r, int size, int *rex, int bit, int *need_rex, int *high)
{
	if (r >= 16) {
		*high = 1;
		return r - 16 + 4;
	}
	if (r & 8)
		*rex |= bit;
	if (size == 1 && r >= 4 && r < 8)
		*need_rex = 1;	/* spl, bpl, sil, dil */
	return r & 7;
}

/* modrm, sib and displacement for a memory operand; returns their length. */
static inline size_t
enc_mem(uint8_t *t, int regv, struct rm m, int *rex)
{
	int sib = m.index >= 0 || m.base < 0 || (m.base & 7) == 4;
	int32_t disp = (int32_t)m.disp;
	int mod = m.base < 0 || (disp == 0 && (m.base & 7) != 5) ? 0 : disp >= -128 && disp < 128 ? 1 : 2;
	size_t n = 0;

	t[n++] = (uint8_t)(mod << 6 | regv << 3 | (sib ? 4 : m.base & 7));
	if (sib) {
		int sc = m.scale == 8 ? 3 : m.scale == 4 ? 2 : m.scale == 2 ? 1 : 0;
		t[n++] = (uint8_t)(sc << 6 | (m.index < 0 ? 4 : m.index & 7) << 3 | (m.base < 0 ? 5 : m.base & 7));
	}
	if (m.index >= 0 && (m.index & 8))
		*rex |= 2;
	if (m.base >= 0 && (m.base & 8))
		*rex |= 1;
	if (mod == 1) {
		t[n++] = (uint8_t)disp;
	} else if (mod == 2 || m.base < 0) {
		memcpy(t + n, &disp, 4);
		n += 4;
	}
	return n;
}

/*
 * Encodes [66] [REX] opc modrm... imm for an instruction placed at at.
 * opc above 0xff is two bytes (0x0fxx). Returns -1 for combinations x86
 * cannot express (ah with a REX prefix) or a rip target out of reach.
 */
static inline int
enc(struct code *c, uint64_t at, int size, unsigned int opc, int reg, struct rm rm, int immsize, uint64_t imm)
{
	int rex = size == 8 ? 8 : 0, need_rex = 0, high = 0, regv, rip_off = -1;
	uint8_t t[8];
	size_t nt = 0;

	regv = reg & 0x100 ? reg & 7 : enc_reg(reg, size, &rex, 4, &need_rex, &high);
	if (rm.kind == RM_REG) {
		t[nt++] = (uint8_t)(0xc0 | regv << 3 | enc_reg(rm.reg, size, &rex, 1, &need_rex, &high));
	} else if (rm.kind == RM_RIP) {
		t[nt++] = (uint8_t)(0x05 | regv << 3);
		rip_off = (int)nt;
		nt += 4;
	} else {
		nt = enc_mem(t, regv, rm, &rex);
	}
	if (high && (rex || need_rex))
		return -1;
	c->n = 0;
	if (size == 2)
		c->b[c->n++] = 0x66;
	if (rex || need_rex)
		c->b[c->n++] = (uint8_t)(0x40 | rex);
	if (opc > 0xff)
		c->b[c->n++] = (uint8_t)(opc >> 8);
	c->b[c->n++] = (uint8_t)opc;
	if (rip_off >= 0)
		rip_off += (int)c->n;
	memcpy(c->b + c->n, t, nt);
	c->n += nt;
	memcpy(c->b + c->n, &imm, (size_t)immsize);
	c->n += (size_t)immsize;
	if (rip_off >= 0) {
		int64_t d = rm.disp - (int64_t)(at + c->n);
		int32_t d32 = (int32_t)d;

		if (d != d32)
			return -1;
		memcpy(c->b + rip_off, &d32, 4);
	}
	return 0;
}

/* Encodes and checks one case at AT; silently skips what x86 cannot encode. */
static inline void
check_enc(int size, unsigned int opc, int reg, struct rm rm, int immsize, uint64_t imm,
	  struct user_regs_struct start)
{
	struct code c;

	if (enc(&c, AT, size, opc, reg, rm, immsize, imm) == 0)
		check(c.b, c.n, start);
}

/* Puts a size-byte value into the memory image at addr. */
static inline void
image_put(uint64_t addr, const void *v, size_t size)
{
	memcpy(image + (addr - arena), v, size);
	arena_dirty = 1;
}

/*
 * Registers for [base + index * scale + disp] to land near D1 + 0x200: the
 * base points there and the index is small, or with no base, the index
 * (at scale 1) points there.
 */
static inline struct user_regs_struct
regs_mem(int base, int index)
{
	struct user_regs_struct r = regs_random();

	if (index >= 0)
		reg_set(&r, index, 8, base < 0 ? D1 + 0x200 : rng_next() % 16);
	if (base >= 0)
		reg_set(&r, base, 8, D1 + 0x200);
	return r;
}

/*
 * An emu program's start: setup (emu_setup, or one that ends with it); a
 * failure bails the whole program out, the child stopped.
 */
static inline void
emu_start(int (*setup)(void))
{
	if (setup() < 0) {
		printf("Bail out! cannot start the traced child: %s\n", strerror(errno));
		child_stop();
		exit(1);
	}
}

/* The closing check over this program's groups; stops the child and prints the plan. */
static inline int
emu_done(void)
{
	ok(total.invalid == 0 && total.refused == 0,
	   "all %d start states valid on any x86-64 CPU (%d were not), and this one resumed each (%d refused)",
	   total.cases, total.invalid, total.refused);
	alarm(0);
	child_stop();
	return tap_done();
}

#endif
