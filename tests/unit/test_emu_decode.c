/* test_emu_decode.c - checks which encodings the emulator takes (nops, ignored prefixes) or refuses, and how emu_decode, emu_exec and emu_describe behave on refusal and failure. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu_test.h"

/* Counts calls, so the unsupported cases can show they touched no memory; optionally fails. */
static int ops_calls, ops_fail_read, ops_fail_write;

static int
probe_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	ops_calls++;
	return ops_fail_read ? -1 : child_read(arg, addr, buf, len);
}

static int
probe_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
	ops_calls++;
	return ops_fail_write ? -1 : child_write(arg, addr, buf, len);
}

static const struct jt_mem_ops probe_ops = { probe_read, probe_write, NULL };

/* ---- the cases ---- */

static void
test_nops(void)
{
	static const struct { const char *name; uint8_t b[12]; size_t n; } nops[] = {
		{ "nop", { 0x90 }, 1 },
		{ "xchg ax,ax", { 0x66, 0x90 }, 2 },
		{ "rex.w nop", { 0x48, 0x90 }, 2 },
		{ "nopl (%rax)", { 0x0f, 0x1f, 0x00 }, 3 },
		{ "nopl 0(%rax)", { 0x0f, 0x1f, 0x40, 0x00 }, 4 },
		{ "nopl 0(%rax,%rax)", { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5 },
		{ "nopw 0(%rax,%rax)", { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 6 },
		{ "nopl 0L(%rax)", { 0x0f, 0x1f, 0x80, 0, 0, 0, 0 }, 7 },
		{ "nopl 0L(%rax,%rax)", { 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 8 },
		{ "nopw 0L(%rax,%rax)", { 0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 9 },
		{ "cs nopw", { 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 10 },
		{ "data16 cs nopw", { 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0 }, 11 },
		{ "nopl with r8 base", { 0x41, 0x0f, 0x1f, 0x40, 0x00 }, 5 },
		{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4 },
		/* Prefixes the CPU ignores on these instructions; capstone drops them too. */
		{ "rep add eax,ecx", { 0xf3, 0x01, 0xc8 }, 3 },
		{ "cs add rax,rcx", { 0x2e, 0x48, 0x01, 0xc8 }, 4 },
		{ "ds je (branch hint)", { 0x3e, 0x74, 0x10 }, 3 },
		{ "cs jne (branch hint)", { 0x2e, 0x75, 0x10 }, 3 },
	};

	for (size_t i = 0; i < sizeof(nops) / sizeof(nops[0]); i++) {
		for (int k = 0; k < 16; k++)
			check(nops[i].b, nops[i].n, regs_random());
		grp_end("%s", nops[i].name);
	}
}

/* ---- what must not be emulated ---- */

static void
test_unsupported(void)
{
	static const struct { const char *name; uint8_t b[8]; size_t n; } u[] = {
		{ "syscall", { 0x0f, 0x05 }, 2 }, { "div rcx", { 0x48, 0xf7, 0xf1 }, 3 },
		{ "imul rax,rcx", { 0x48, 0x0f, 0xaf, 0xc1 }, 4 }, { "adc rax,rcx", { 0x48, 0x11, 0xc8 }, 3 },
		{ "sbb rax,rcx", { 0x48, 0x19, 0xc8 }, 3 }, { "cpuid", { 0x0f, 0xa2 }, 2 },
		{ "lock add [rbx],rax", { 0xf0, 0x48, 0x01, 0x03 }, 4 }, { "add [rbx],rax", { 0x48, 0x01, 0x03 }, 3 },
		{ "rep stosb", { 0xf3, 0xaa }, 2 }, { "movzx eax,cl", { 0x0f, 0xb6, 0xc1 }, 3 },
		{ "xchg rax,rcx", { 0x48, 0x87, 0xc8 }, 3 }, { "cmove rax,rcx", { 0x48, 0x0f, 0x44, 0xc1 }, 4 },
		{ "sete al", { 0x0f, 0x94, 0xc0 }, 3 }, { "inc rax", { 0x48, 0xff, 0xc0 }, 3 },
		{ "push ax", { 0x66, 0x50 }, 2 }, { "push imm16", { 0x66, 0x6a, 0xff }, 3 },
		{ "lea rax,[eax+ebx]", { 0x67, 0x48, 0x8d, 0x04, 0x18 }, 5 }, { "mov eax,ds", { 0x8c, 0xd8 }, 2 },
		{ "pause", { 0xf3, 0x90 }, 2 }, { "pushf", { 0x9c }, 1 }, { "leave", { 0xc9 }, 1 },
		{ "shl rax,4", { 0x48, 0xc1, 0xe0, 0x04 }, 4 }, { "pop [rax]", { 0x8f, 0x00 }, 2 },
		{ "jrcxz", { 0xe3, 0x10 }, 2 }, { "loop", { 0xe2, 0x10 }, 2 }, { "int3", { 0xcc }, 1 },
		{ "ljmp [rax]", { 0xff, 0x28 }, 2 }, { "mov rax,cr0", { 0x0f, 0x20, 0xc0 }, 3 },
		{ "jmp [eax]", { 0x67, 0xff, 0x20 }, 3 },
	};
	struct user_regs_struct r = regs_random(), r2;
	struct jt_insn in;

	for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		uint8_t b[16];
		int rc;

		memset(b, 0x90, sizeof(b));
		memcpy(b, u[i].b, u[i].n);
		rc = emu_decode(&in, AT, b, sizeof(b));
		r2 = r;
		ops_calls = 0;
		ok(rc == 0 && !in.supported && in.len == u[i].n && emu_exec(&in, &r2, &probe_ops) == -1 &&
		   memcmp(&r, &r2, sizeof(r)) == 0 && ops_calls == 0,
		   "%s: decoded (len %d), not emulated, emu_exec -1 leaves regs alone", u[i].name, in.len);
	}
}

static void
test_undecodable(void)
{
	static const uint8_t trunc_call[] = { 0xe8, 0x00 }, esc[] = { 0x0f }, bad[] = { 0x06 };
	struct jt_insn in;

	ok(emu_decode(&in, AT, trunc_call, sizeof(trunc_call)) == -1, "truncated call: emu_decode -1");
	ok(emu_decode(&in, AT, esc, sizeof(esc)) == -1, "lone 0x0f: emu_decode -1");
	ok(emu_decode(&in, AT, bad, sizeof(bad)) == -1, "push es (invalid in 64-bit mode): emu_decode -1");
}

/* A failed memory access leaves the registers exactly as they were. */
static void
test_mem_failure(void)
{
	static const struct { const char *name; uint8_t b[8]; size_t n; int wr; } f[] = {
		{ "cmp byte [rip],0", { 0x80, 0x3d, 0, 0, 0, 0, 0 }, 7, 0 },
		{ "push rbx", { 0x53 }, 1, 1 }, { "pop rbx", { 0x5b }, 1, 0 },
		{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, 1 }, { "ret", { 0xc3 }, 1, 0 },
		{ "mov [rbx],rax", { 0x48, 0x89, 0x03 }, 3, 1 }, { "mov rax,[rbx]", { 0x48, 0x8b, 0x03 }, 3, 0 },
		{ "jmp [rip]", { 0xff, 0x25, 0, 0, 0, 0 }, 6, 0 }, { "add rax,[rbx]", { 0x48, 0x03, 0x03 }, 3, 0 },
		{ "call [rbx]", { 0xff, 0x13 }, 2, 0 }, { "call [rbx] (push fails)", { 0xff, 0x13 }, 2, 1 },
	};
	struct user_regs_struct r = regs_mem(3, -1), r2;
	struct jt_insn in;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		r2 = r;
		ops_fail_read = !f[i].wr, ops_fail_write = f[i].wr;
		ok(emu_decode(&in, AT, f[i].b, f[i].n) == 0 && in.supported &&
		   emu_exec(&in, &r2, &probe_ops) == -1 && memcmp(&r, &r2, sizeof(r)) == 0,
		   "%s: failing %s gives -1, regs unchanged", f[i].name, f[i].wr ? "write" : "read");
	}
	ops_fail_read = ops_fail_write = 0;
}

static void
test_misc(void)
{
	static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, push[] = { 0x41, 0x54 };
	struct user_regs_struct r = regs_random();
	struct jt_insn in;
	char buf[96];

	/* The tracer calls emu_exec with rip just past the int3; only insn->addr counts. */
	r.rip = AT + 1;
	ok(emu_decode(&in, AT, nop5, sizeof(nop5)) == 0 && emu_exec(&in, &r, &child_ops) == 0 && r.rip == AT + 5,
	   "emu_exec takes the address from the insn, not from regs->rip");
	ok(emu_decode(&in, 0x1234, push, sizeof(push)) == 0 && memcmp(in.bytes, push, 2) == 0 && in.addr == 0x1234,
	   "emu_decode keeps the original bytes and address");
	emu_describe(&in, buf, sizeof(buf));
	ok(strstr(buf, "push") && strstr(buf, "r12"), "emu_describe: %s", buf);
	emu_describe(&in, buf, 4);
	ok(strlen(buf) == 3, "emu_describe truncates to the buffer");
}

int
main(void)
{
	emu_start(emu_setup);
	test_nops();
	test_unsupported();
	test_undecodable();
	test_mem_failure();
	test_misc();
	return emu_done();
}
