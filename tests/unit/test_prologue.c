/* test_prologue.c - checks when a breakpoint or an entry-only uprobe may move past a function's first instructions, on real glibc prologues and on ones it must refuse. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "modules.h"
#include "prologue.h"
#include "sym.h"
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

static void
test_move(void)
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
}

/* ---- where an entry-only uprobe goes ---- */

/* glibc 2.36's free: test %rdi,%rdi; je +0xc8 (its ret); push %rbp; lea -0x10(%rdi),%rsi; push %rbx; sub $0x18,%rsp */
#define FREE_236 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00, 0x55, 0x48, 0x8d, 0x77, 0xf0, 0x53, 0x48, 0x83, \
		 0xec, 0x18
#define FREE_LEN 201	/* its ret at +200 */
/* jemalloc 5.3's free (Debian 12's libjemalloc2), up to its first branch, a jne to +0xc0 */
#define JE_FREE 0x48, 0x89, 0xf8, 0x48, 0x8b, 0x15, 0x0e, 0x53, 0x0a, 0x00, 0x48, 0x89, 0xf9, 0x48, 0xc1, 0xe8, 0x1a, \
		0x48, 0x81, 0xe1, 0x00, 0x00, 0x00, 0xc0, 0x25, 0xf0, 0x00, 0x00, 0x00, 0x64, 0x48, 0x03, 0x04, 0x25, 0x00, \
		0x00, 0x00, 0x00, 0x48, 0x01, 0xd0, 0x48, 0x3b, 0x88, 0xb0, 0x01, 0x00, 0x00, 0x0f, 0x85, 0x8a, 0x00, 0x00, 0x00
#define MOV_RAX_RDI_X4 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf8

/*
 * One function of len bytes: head at +0, patch at +patch_at, nops between,
 * and a ret as its last byte; the arguments the handler reads; the answer
 * wanted, and a word its why must hold.
 */
struct scase {
	const char *name;
	uint8_t head[64];
	size_t nhead;
	uint8_t patch[8];
	size_t npatch, patch_at, len;
	unsigned args;
	uint64_t site, delta;
	int emulated;
	const char *says;
};

static const struct scase scases[] = {
	/* glibc 2.36's free: the je of its NULL test, so that free(NULL) is still a call */
	{ "glibc 2.36's free", { FREE_236 }, 19, { 0 }, 0, 0, FREE_LEN, 1, 3, 0, 1,
	  "past its first instruction (test rdi, rdi): je" },
	{ "malloc's push r12 first", { 0x41, 0x54, 0x55, 0x53 }, 4, { 0 }, 0, 0, 16, 1, 0, 0, 1, "entry: push r12, emulated" },
	{ "push rbp first", { 0x55, 0x48, 0x89, 0xe5 }, 4, { 0 }, 0, 0, 16, 1, 0, 0, 1, "entry: push rbp, emulated" },
	/* je to a nop at +100: not an early return, but the je itself is emulated and sees the entry's state (a run of one) */
	{ "test, then je to a nop", { 0x48, 0x85, 0xff, 0x0f, 0x84, 0x5b, 0, 0, 0, 0x55 }, 10, { 0 }, 0, 0, FREE_LEN, 1,
	  3, 0, 1, "past its first instruction (test rdi, rdi): je 0x1064, emulated" },
	/* free, and a jmp at +100 back to its push: the probe would fire twice */
	{ "free with a jump to +9", { FREE_236 }, 19, { 0xe9, 0xa0, 0xff, 0xff, 0xff }, 5, 100, FREE_LEN, 1, 3, 0, 1,
	  "past its first instruction" },
	/* free, and a jne at +100 back to its je */
	{ "free with a jump to +3", { FREE_236 }, 19, { 0x75, 0x9d }, 2, 100, FREE_LEN, 1, 0, 0, 0,
	  "entry: test rdi, rdi, stepped" },
	/* the je falls through to a mov, which is stepped */
	{ "free with a mov after the je", { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x48, 0x89, 0xfb }, 12, { 0 }, 0, 0,
	  FREE_LEN, 1, 3, 0, 1, "past its first instruction (test rdi, rdi): je" },
	/* and when a jump leads to the je too, nothing is left but the entry */
	{ "a mov after the je, a jump to +3", { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x48, 0x89, 0xfb }, 12,
	  { 0x75, 0x9d }, 2, 100, FREE_LEN, 1, 0, 0, 0, "entry: test rdi, rdi, stepped" },
	/* and rdi,rdi tests like test but writes rdi, which the handler reads */
	{ "and rdi,rdi before the je", { 0x48, 0x21, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x55 }, 10, { 0 }, 0, 0, FREE_LEN, 1,
	  0, 0, 0, "entry: and rdi, rdi, stepped" },
	/* a load through rdi may fault before the je: only a call that crashes there goes uncounted */
	{ "cmp [rdi] before the je", { 0x48, 0x83, 0x3f, 0x00, 0x0f, 0x84, 0xbe, 0, 0, 0, 0x55 }, 11, { 0 }, 0, 0,
	  FREE_LEN, 1, 4, 0, 1, "past its first instruction (cmp qword ptr [rdi], 0): je" },
	/* jemalloc 5.3's free: nine loads and computations on its thread's cache, then its first branch */
	{ "jemalloc's free", { JE_FREE }, 54, { 0 }, 0, 0, 0xd0, 1, 0x30, 0, 1,
	  "past 9 instructions (mov ... cmp rcx, qword ptr [rax + 0x1b0]): jne" },
	/* jemalloc 5.3's malloc: cmp rdi, 0x1000; ja (its large path) */
	{ "jemalloc's malloc", { 0x48, 0x81, 0xff, 0x00, 0x10, 0x00, 0x00, 0x0f, 0x87, 0x93, 0, 0, 0, 0x55 }, 14, { 0 },
	  0, 0, 0xa8, 1, 7, 0, 1, "past its first instruction (cmp rdi, 0x1000): ja" },
	/* a rip-relative load cannot fault: posix_memalign's cmp byte ptr [rip+x],0; push r12 */
	{ "cmp [rip] before a push", { 0x80, 0x3d, 0x10, 0, 0, 0, 0x00, 0x41, 0x54 }, 9, { 0 }, 0, 0, 24, 1, 7, 0, 1,
	  "past its first instruction (cmp byte ptr [rip + 0x10], 0): push r12, emulated" },
	/* nor a load of the stack protector's canary */
	{ "mov rax, fs:[0x28]; push", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0, 0x55 }, 10, { 0 }, 0, 0, 16, 1, 9, 0, 1,
	  "push rbp, emulated" },
	/* ud2 never goes on: an event skipped past it would be lost */
	{ "ud2 before a push", { 0x0f, 0x0b, 0x55 }, 3, { 0 }, 0, 0, 16, 1, 0, 0, 0, "entry: ud2, stepped" },
	/* capstone 4 says lock cmpxchg and movnti only read their memory operand */
	{ "lock cmpxchg [rsp+8], rcx before a push", { 0xf0, 0x48, 0x0f, 0xb1, 0x4c, 0x24, 0x08, 0x55 }, 8, { 0 }, 0, 0, 16,
	  0, 0, 0, 0, "stepped" },
	{ "movnti [rsp-8], eax before a push", { 0x0f, 0xc3, 0x44, 0x24, 0xf8, 0x55 }, 6, { 0 }, 0, 0, 16, 0, 0, 0, 0,
	  "stepped" },
	/* a test of rax, no argument: no early return (the je is still the second instruction) */
	{ "test rax before the je", { 0x48, 0x85, 0xc0, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x55 }, 10, { 0 }, 0, 0, FREE_LEN, 1, 3, 0,
	  1, "past its first instruction (test rax, rax)" },
	/* cmp $0x10,%rsi; jbe ret; push rbx: the jbe, before the early return */
	{ "cmp rsi, 0x10; jbe ret", { 0x48, 0x83, 0xfe, 0x10, 0x0f, 0x86, 0xbe, 0, 0, 0, 0x53 }, 11, { 0 }, 0, 0, FREE_LEN, 2,
	  4, 0, 1, "past its first instruction (cmp rsi, 0x10): jbe" },
	/* endbr64 first: stepped, as anything but the emulated kinds */
	{ "endbr64, then a mov", { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x89, 0xfb }, 7, { 0 }, 0, 0, 16, 1, 0, 0, 0,
	  "entry: endbr64, stepped" },
	/* libstdc++'s operator delete: endbr64; jmp free */
	{ "endbr64, then a jmp", { 0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0x87, 0x2f, 0xff, 0xff }, 9, { 0 }, 0, 0, 9, 1, 4, 0, 1,
	  "past its first instruction (endbr64): jmp" },
	{ "endbr64; test; je ret; push", { 0xf3, 0x0f, 0x1e, 0xfa, FREE_236 }, 23, { 0 }, 0, 0, FREE_LEN + 4, 1, 7, 0, 1,
	  "past 2 instructions (endbr64 ... test rdi, rdi): je" },
	/* sub $0x18,%rsp; push rbx: the push is reached with the stack pointer 0x18 lower */
	{ "sub rsp, then push", { 0x48, 0x83, 0xec, 0x18, 0x53 }, 5, { 0 }, 0, 0, 16, 1, 4, 0x18, 1,
	  "past its first instruction (sub rsp, 0x18): push rbx, emulated" },
	/* libstdc++'s operator new: endbr64; test rdi,rdi; mov eax,1; push rbx (the loop back to its call is later) */
	{ "operator new", { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff, 0xb8, 1, 0, 0, 0, 0x53 }, 13,
	  { 0xeb, 0xf0 }, 2, 30, 40, 1, 12, 0, 1, "past 3 instructions (endbr64 ... mov eax, 1): push rbx, emulated" },
	/* the same, with a jump back into the skipped instructions */
	{ "operator new, a jump to +7", { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff, 0xb8, 1, 0, 0, 0, 0x53 }, 13,
	  { 0xeb, 0xe7 }, 2, 30, 40, 1, 0, 0, 0, "entry: endbr64, stepped" },
	/* operator new(nothrow): endbr64; sub rsp,8; call: two stack pointer changes add up */
	{ "endbr64; sub rsp, 8; sub rsp, 16; call", { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xec,
	  0x10, 0xe8, 0, 0, 0, 0 }, 17, { 0 }, 0, 0, 24, 1, 12, 24, 1, "past 3 instructions (endbr64 ... sub rsp, 0x10): call" },
	/* mov rbx,rdi before push rbp: the caller's rbx would be in no register the unwinder knows */
	{ "mov rbx, rdi; push rbp", { 0x48, 0x89, 0xfb, 0x55 }, 4, { 0 }, 0, 0, 16, 1, 0, 0, 0, "entry: mov rbx, rdi, stepped" },
	/* twelve instructions skipped at most: thirteen before the push are one too many */
	{ "thirteen movs, then push", { MOV_RAX_RDI_X4, MOV_RAX_RDI_X4, MOV_RAX_RDI_X4, 0x48, 0x89, 0xf8, 0x55 }, 40, { 0 },
	  0, 0, 48, 1, 0, 0, 0, "entry: mov rax, rdi, stepped" },
	{ "twelve movs, then push", { MOV_RAX_RDI_X4, MOV_RAX_RDI_X4, MOV_RAX_RDI_X4, 0x55 }, 37, { 0 }, 0, 0, 48, 1, 36, 0,
	  1, "past 12 instructions (mov ... mov rax, rdi): push rbp, emulated" },
	/* a memory write is never skipped */
	{ "mov [rsp-8], rdi; push", { 0x48, 0x89, 0x7c, 0x24, 0xf8, 0x55 }, 6, { 0 }, 0, 0, 16, 1, 0, 0, 0, "stepped" },
	/* add rsp moves the stack pointer up */
	{ "add rsp, 8; push", { 0x48, 0x83, 0xc4, 0x08, 0x55 }, 5, { 0 }, 0, 0, 16, 1, 0, 0, 0, "stepped" },
	/* the emulated kinds at the entry */
	{ "push r15 (41 57)", { 0x41, 0x57 }, 2, { 0 }, 0, 0, 16, 1, 0, 0, 1, "emulated" },
	{ "push with rex.w (48 55)", { 0x48, 0x55, 0x48, 0x89, 0xfb }, 5, { 0 }, 0, 0, 16, 1, 0, 0, 0, "stepped" },
	{ "push word (66 55)", { 0x66, 0x55, 0x48, 0x89, 0xfb }, 5, { 0 }, 0, 0, 16, 1, 0, 0, 0, "stepped" },
	{ "jmp rel8", { 0xeb, 0x00 }, 2, { 0 }, 0, 0, 16, 1, 0, 0, 1, "entry: jmp" },
	{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, { 0 }, 0, 0, 16, 1, 0, 0, 1, "entry: call" },
	{ "jne rel32", { 0x0f, 0x85, 0, 0, 0, 0 }, 6, { 0 }, 0, 0, 16, 1, 0, 0, 1, "entry: jne" },
	{ "nop", { 0x90 }, 1, { 0 }, 0, 0, 16, 1, 0, 0, 1, "entry: nop, emulated" },
	{ "66 90", { 0x66, 0x90 }, 2, { 0 }, 0, 0, 16, 1, 0, 0, 1, "emulated" },
	/* 6.1 does not emulate the multi-byte nop (later kernels do): nopl, then a mov */
	{ "nopl (0f 1f 40 00)", { 0x0f, 0x1f, 0x40, 0x00, 0x48, 0x89, 0xfb }, 7, { 0 }, 0, 0, 16, 1, 0, 0, 0, "stepped" },
	/* bnd jmp: 6.1 emulates it, but only no prefix at all is taken as emulated */
	{ "bnd jmp (f2 e9)", { 0xf2, 0xe9, 0, 0, 0, 0 }, 6, { 0 }, 0, 0, 16, 1, 0, 0, 0, "stepped" },
	/* mov rdi,rsi writes argument 1, which the handler reads: no move */
	{ "mov rsi, rdi; push", { 0x48, 0x89, 0xfe, 0x55 }, 4, { 0 }, 0, 0, 16, 3, 0, 0, 0, "entry: mov rsi, rdi, stepped" },
	{ "an undecodable tail", { 0x48, 0x85, 0xff, 0x74, 0x01, 0x55, 0xc3, 0x06 }, 8, { 0 }, 0, 0, 8, 1, 0, 0, 0,
	  "entry: test rdi, rdi, stepped" },
};

static void
test_site(void)
{
	for (size_t i = 0; i < sizeof(scases) / sizeof(scases[0]); i++) {
		const struct scase *c = &scases[i];
		uint8_t code[256];
		struct prologue_site s;
		int r;

		memset(code, 0x90, c->len);
		code[c->len - 1] = 0xc3;
		memcpy(code, c->head, c->nhead);
		memcpy(code + c->patch_at, c->patch, c->npatch);
		memset(&s, 0xa5, sizeof(s));
		r = prologue_probe_site(code, c->len, ENTRY, c->args, &s);
		s.why[sizeof(s.why) - 1] = 0;
		ok(r == 0 && s.site == ENTRY + c->site && s.sp_delta == c->delta && s.emulated == c->emulated &&
			   strstr(s.why, c->says),
		   "%s: site +%llu, sp_delta %llu, %s (%s)", c->name, (unsigned long long)(s.site - ENTRY),
		   (unsigned long long)s.sp_delta, s.emulated ? "emulated" : "stepped", s.why);
		if (r != 0 || s.site != ENTRY + c->site || s.emulated != c->emulated)
			printf("# want site +%llu, %s, saying \"%s\"\n", (unsigned long long)c->site,
			       c->emulated ? "emulated" : "stepped", c->says);
	}
}

/* ---- this host's allocators ---- */

/* The module of ours whose file is called soname, or soname and a version (libstdc++.so.6.0.30); or NULL. */
static struct jt_module *
find_module(const struct jt_modules *mods, const char *soname)
{
	size_t n = strlen(soname);

	for (size_t i = 0; i < mods->n; i++) {
		const char *slash = strrchr(mods->v[i]->path, '/'), *base = slash ? slash + 1 : mods->v[i]->path;

		if (strncmp(base, soname, n) == 0 && (base[n] == 0 || base[n] == '.'))
			return mods->v[i];
	}
	return NULL;
}

/* Non-zero when code is glibc 2.36 free's opening: test rdi,rdi; je to a ret; push rbp (or another 64-bit push). */
static int
free_has_null_test(const uint8_t *code, size_t len, size_t *after)
{
	size_t je = 3, target;

	if (len < 12 || memcmp(code, "\x48\x85\xff", 3) != 0)
		return 0;
	if (code[je] == 0x74) {
		*after = je + 2;
		target = *after + (size_t)(int8_t)code[je + 1];
	} else if (code[je] == 0x0f && code[je + 1] == 0x84) {
		int32_t rel;

		memcpy(&rel, code + je + 2, 4);
		*after = je + 6;
		target = *after + (size_t)(int64_t)rel;
	} else {
		return 0;
	}
	return target < len && code[target] == 0xc3 &&
	       ((code[*after] >= 0x50 && code[*after] <= 0x57) ||
		(code[*after] == 0x41 && code[*after + 1] >= 0x50 && code[*after + 1] <= 0x57));
}

/* Prints where fn's probe goes, when m defines it; checks it against what its bytes show. Returns 0, or -1 when fn is not there. */
static int
test_real_fn(struct jt_modules *mods, struct jt_sym *sym, struct jt_module *m, enum jt_fn fn)
{
	const char *name = alloc_fns[fn].symbol;
	struct prologue_site s;
	uint64_t lo, hi;
	uint8_t *code;
	size_t after = 0;
	int r = -1;

	if (sym_lookup_range(sym, m->path, name, &lo, &hi) < 0 || hi - lo > (1 << 20))
		return -1;
	code = malloc(hi - lo);
	pthread_mutex_lock(&mods->elf_lock);
	if (code && module_read_code(m, lo, code, hi - lo) == 0)
		r = prologue_probe_site(code, hi - lo, lo, alloc_fn_args(fn), &s);
	pthread_mutex_unlock(&mods->elf_lock);
	if (r < 0) {
		ok(0, "%s: its code is read from %s and a site chosen", name, m->path);
		free(code);
		return 0;
	}
	printf("# %-36s +%-3llu sp_delta %llu  %s\n", name, (unsigned long long)(s.site - lo),
	       (unsigned long long)s.sp_delta, s.why);
	ok(s.site >= lo && s.site < hi, "%s: its site lies in it", name);
	if ((code[0] >= 0x50 && code[0] <= 0x57) || (code[0] == 0x41 && code[1] >= 0x50 && code[1] <= 0x57))
		ok(s.site == lo && s.emulated, "%s: it opens with a push: the entry, emulated", name);
	if (fn == FN_FREE && free_has_null_test(code, hi - lo, &after))
		ok(s.site == lo + 3 && after == 9 && s.emulated && s.sp_delta == 0,
		   "free: it opens with glibc 2.36's NULL test: the site is its je, emulated, before the early return");
	else if (fn == FN_FREE)
		ok(s.site >= lo, "free: no NULL test of glibc 2.36's form");
	free(code);
	return 0;
}

/* Every allocator of this host's libc and libstdc++: where its probe goes (TAP diag), checked where its bytes say. */
static void
test_real(void)
{
	static const char *const libs[] = { "libc.so.6", "libstdc++.so.6" };
	struct jt_modules mods;
	struct jt_sym *sym = sym_new();
	const char *err;

	if (!dlopen("libstdc++.so.6", RTLD_NOW))
		printf("# no libstdc++.so.6 here: %s\n", dlerror());
	modules_init(&mods);
	ok(modules_refresh(&mods, getpid()) > 0, "our modules are read");
	for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]); l++) {
		struct jt_module *m = find_module(&mods, libs[l]);

		if (!m || sym_add_module(sym, m->path, m->bias, &err) < 0) {
			ok(l > 0, "%s is loaded and its symbols read", libs[l]);
			continue;
		}
		printf("# %s:\n", m->path);
		for (int fn = 0; fn < FN_REPORTED; fn++) {
			int found = test_real_fn(&mods, sym, m, (enum jt_fn)fn) == 0;

			if (!found && l == 0 && (fn == FN_FREE || fn == FN_MALLOC || fn == FN_CALLOC || fn == FN_REALLOC))
				ok(0, "%s: found in %s, with its size", alloc_fns[fn].symbol, m->path);
			if (!found && l == 1 && fn == FN_DEL)
				ok(0, "%s: found in %s, with its size", alloc_fns[fn].symbol, m->path);
		}
	}
	sym_destroy(sym);
	modules_clear(&mods);
}

int
main(void)
{
	test_move();
	test_site();
	test_real();
	return tap_done();
}
