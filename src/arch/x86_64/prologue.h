/* prologue.h - where an entry breakpoint can stand when a function's first instruction already holds someone else's (the contract every src/arch/<arch>/prologue.h fills). */
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

#endif
