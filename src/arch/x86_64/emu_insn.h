/* emu_insn.h - the decoded form emu_decode.c gives jt_insn and emu.c replays: operand references and operations (private to the two). */
#ifndef JT_EMU_INSN_H
#define JT_EMU_INSN_H

#include <stdint.h>

#include <capstone/capstone.h>

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

/*
 * emu_decode.c's one capstone handle (x86-64, details on), opened on first
 * use and shared by the arch code that decodes (prologue.c). Returns 0, or
 * -1 when capstone cannot be opened.
 */
int emu_handle(csh *h);

/* The number (0-15, in the encoding's order) of the general register reg is part of (eax, ah and ax are rax's), or OPD_NONE. */
uint8_t emu_cs_gpr(x86_reg reg);

#endif
