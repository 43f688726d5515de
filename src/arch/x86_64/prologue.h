/* prologue.h - where an entry breakpoint or probe can stand other than on a function's first instruction, proven from its decoded code (the contract every src/arch/<arch>/prologue.h fills). */
#ifndef JT_PROLOGUE_H
#define JT_PROLOGUE_H

#include <stddef.h>
#include <stdint.h>

/* A breakpoint moved past a function's first instruction. */
struct prologue_move {
	uint64_t site;		/* the second instruction: where the breakpoint goes */
	uint64_t sp_delta;	/* what the first one took off the stack pointer: at site, the entry's is sp + sp_delta */
	char skipped[200];	/* the first instruction, for messages ("push %r12") */
};

/*
 * code[0..len) is a whole function as its file holds it, from its entry at
 * address entry. args has bit n set for each argument n the entry handler
 * reads. Proves that a breakpoint on the second instruction sees what one
 * on the entry would: the first instruction always falls through to it,
 * writes no register the handler reads and no memory but by a push (a
 * memory operand only as a mov's, movzx's or movsx's source, or a cmp's,
 * test's or lea's), and moves the stack pointer only by a push or a sub of
 * a constant (so the return address is found at sp + sp_delta); and no
 * direct jump or call in the function leads to the second instruction, so
 * only entries arrive there. Returns 0 and fills *m, or -1 with *why
 * saying what failed.
 */
int prologue_move(const uint8_t *code, size_t len, uint64_t entry, unsigned args, struct prologue_move *m,
		  const char **why);

/* Where an entry-only kernel uprobe goes (prologue_probe_site). */
struct prologue_site {
	uint64_t site;		/* where the probe goes */
	uint64_t sp_delta;	/* what the instructions skipped took off the stack pointer (0 if none): at site, the entry's is sp + sp_delta */
	int emulated;		/* the kernel emulates the instruction at site (no single-step) */
	char why[96];		/* for --verbose: "entry: push r12, emulated", "entry: mov rax, rsi, stepped",
				   "past its first instruction (test rdi, rdi): je 0x98fb8, emulated" */
};

/*
 * code[0..len) is the function at run-time address addr (from its file).
 * args: bit n set for each argument register the probe handler reads (as
 * prologue_move's). A kernel uprobe on an instruction that Linux 6.1
 * emulates (a push of a 64-bit general register, jmp, call and jcc with a
 * relative target and no prefix, nop) costs a fraction of one it must
 * single-step out of line. Fills *out with, in this order of preference:
 * - the entry, when the kernel emulates its instruction;
 * - past a run of at most twelve instructions that each go on to the next
 *   (but by a fault of a load), write no memory, no argument register in
 *   args and no register the caller keeps (rbx, rbp, r12-r15), and move
 *   the stack pointer only by a sub of a constant (sp_delta): the first
 *   emulated instruction after them. Every call is still an event, but
 *   one whose thread faults in those instructions (prologue.c says why
 *   that is accepted).
 * Either move needs the whole function decoded and no direct jump or call
 * in it into (addr, site], so only the entry leads to site, once per call.
 * Otherwise the entry (always a correct answer), emulated or not.
 * Returns 0, or -1 (*out still the entry, stepped) for no code at all or
 * when capstone cannot be opened.
 */
int prologue_probe_site(const uint8_t *code, size_t len, uint64_t addr, unsigned args, struct prologue_site *out);

#endif
