/* emu.h - emulates the one instruction an int3 displaces, so the breakpoint never leaves memory. */
#ifndef JT_EMU_H
#define JT_EMU_H

#include <stdint.h>
#include <sys/user.h>

#include "mem.h"

/*
 * A decoded instruction, prepared once when the breakpoint is inserted.
 * Opaque to callers apart from len and supported.
 */
struct jt_insn {
	uint64_t addr;		/* where it lives in the target */
	uint8_t len;		/* length in bytes */
	uint8_t supported;	/* 1 when emu_exec can run it */
	uint8_t bytes[16];	/* the original bytes */
	/* private to emu.c */
	uint8_t op;		/* what emu_exec does (enum in emu.c) */
	uint8_t size;		/* operand size in bytes: 1, 2, 4 or 8 */
	uint8_t cond;		/* condition code (0-15, as in the opcode) of a jcc */
	uint8_t dst, src;	/* operands: register, immediate or memory (emu.c's own encoding) */
	uint8_t base, index;	/* memory operand registers (emu.c's numbering, 0xff: none) */
	uint8_t scale;		/* memory operand index scale: 1, 2, 4 or 8 */
	uint8_t seg;		/* memory operand segment base: 0 none, 1 fs, 2 gs */
	int64_t imm;		/* immediate; for a direct branch, its absolute target */
	int64_t disp;		/* memory displacement; rip-relative ones already made absolute */
};

/*
 * Decodes the instruction in code[0..len) located at addr. Returns 0 and fills
 * *insn (with supported=0 when it is valid but not emulated), or -1 when
 * capstone cannot decode it.
 */
int emu_decode(struct jt_insn *insn, uint64_t addr, const uint8_t *code, size_t len);

/*
 * Applies insn to regs as the CPU would, including rip and the arithmetic
 * flags, using mem for stack and memory operands. Returns 0, or -1 (regs
 * unchanged) when the instruction is not supported or memory access failed.
 */
int emu_exec(const struct jt_insn *insn, struct user_regs_struct *regs, const struct jt_mem_ops *mem);

/* Short human-readable text of the instruction, for debug output. */
const char *emu_describe(const struct jt_insn *insn, char *buf, size_t size);

#endif
