/* test_prologue.c - checks when a breakpoint may move past a function's first instruction, on real glibc prologues and on ones it must refuse. */
#include <stdint.h>
#include <string.h>

#include "prologue.h"
#include "tap.h"

#define ENTRY 0x1000

/* One case: a whole function's bytes, the arguments read, and the answer wanted. */
struct pcase {
	const char *name;
	uint8_t code[24];
	size_t len;
	unsigned args;
	int ok;			/* 0: moved, -1: refused */
	uint64_t site, delta;	/* when moved */
};

static const struct pcase cases[] = {
	/* glibc 2.36's malloc: push %r12; push %rbp; push %rbx; mov %rdi,%rbx; ...; ret */
	{ "malloc's push %r12", { 0x41, 0x54, 0x55, 0x53, 0x48, 0x89, 0xfb, 0x5b, 0x5d, 0x41, 0x5c, 0xc3 }, 12,
	  1, 0, ENTRY + 2, 8 },
	/* free: test %rdi,%rdi; je +0 (to the ret); ret */
	{ "free's test %rdi,%rdi", { 0x48, 0x85, 0xff, 0x74, 0x00, 0xc3 }, 6, 1, 0, ENTRY + 3, 0 },
	/* reallocarray: mov %rsi,%rax writes no argument register */
	{ "reallocarray's mov %rsi,%rax", { 0x48, 0x89, 0xf0, 0xc3 }, 4, 6, 0, ENTRY + 3, 0 },
	/* sub $0x18,%rsp; add $0x18,%rsp; ret */
	{ "sub $0x18,%rsp", { 0x48, 0x83, 0xec, 0x18, 0x48, 0x83, 0xc4, 0x18, 0xc3 }, 9, 1, 0, ENTRY + 4, 0x18 },
	/* endbr64; ret */
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa, 0xc3 }, 5, 1, 0, ENTRY + 4, 0 },
	/* _exit's mov x(%rip),%r8 when no argument is read */
	{ "mov to %r8, no argument read", { 0x4c, 0x8b, 0x05, 0, 0, 0, 0, 0xc3 }, 8, 0, 0, ENTRY + 7, 0 },
	/* mov %rdi,%rsi when argument 1 (rsi) is read */
	{ "mov %rdi,%rsi writes argument 1", { 0x48, 0x89, 0xfe, 0xc3 }, 4, 3, -1, 0, 0 },
	/* xor %edi,%edi writes edi, part of rdi */
	{ "xor %edi,%edi writes argument 0", { 0x31, 0xff, 0xc3 }, 3, 1, -1, 0, 0 },
	/* mov %dil,%al; ... reads only: fine, but mov %al,%dh writes rdx (argument 2) */
	{ "mov %al,%dh writes argument 2", { 0x88, 0xc6, 0xc3 }, 3, 4, -1, 0, 0 },
	/* lock cmpxchg writes memory, though capstone 4 says it only reads it */
	{ "lock cmpxchg [rdi], rcx writes memory", { 0xf0, 0x48, 0x0f, 0xb1, 0x0f, 0xc3 }, 6, 0, -1, 0, 0 },
	/* jmp to elsewhere: never falls through */
	{ "a jmp first", { 0xeb, 0x01, 0xc3, 0xc3 }, 4, 1, -1, 0, 0 },
	/* add $8,%rsp moves the stack pointer up: the return address slot is not below it */
	{ "add $8,%rsp", { 0x48, 0x83, 0xc4, 0x08, 0xc3 }, 5, 1, -1, 0, 0 },
	/* mov %rdi,(%rsp) writes memory (the return address itself) */
	{ "mov %rdi,(%rsp) writes memory", { 0x48, 0x89, 0x3c, 0x24, 0xc3 }, 5, 1, -1, 0, 0 },
	/* push %rbp; 1: dec %ecx... jne 1b: a loop back to the second instruction */
	{ "a jump back to the second instruction", { 0x55, 0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3 }, 7, 1, -1, 0, 0 },
	/* push %rbp; call to the second instruction */
	{ "a call to the second instruction", { 0x55, 0xe8, 0xfb, 0xff, 0xff, 0xff, 0x5d, 0xc3 }, 8, 1, -1, 0, 0 },
	/* push %rbp; then bytes capstone cannot decode */
	{ "an undecodable tail", { 0x55, 0x5d, 0x06, 0xc3 }, 4, 1, -1, 0, 0 },
	/* a function of one instruction has no second one */
	{ "a lone ret", { 0xc3 }, 1, 1, -1, 0, 0 },
};

int
main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		struct prologue_move m;
		const char *why = NULL;
		int r = prologue_move(c->code, c->len, ENTRY, c->args, &m, &why);

		ok(r == c->ok, "%s: %s (%s)", c->name, c->ok == 0 ? "moved" : "refused", r == 0 ? "moved" : why);
		if (r == 0 && c->ok == 0) {
			is_u64(m.site, c->site, "  its site");
			is_u64(m.sp_delta, c->delta, "  its stack pointer change");
		}
	}
	return tap_done();
}
