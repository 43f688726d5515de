/* plt.c - x86-64: finds the GOT slot a call read its target from (call *slot(%rip), or a call to a PLT stub), and knows a stub's jump. */
#include <string.h>

#include "mem.h"
#include "plt.h"

/* "call *disp32(%rip)" is 6 bytes long; so is "call rel32" after a 1-byte prefix or padding. */
#define PLT_CALL_LEN 6

/* Reads the little-endian signed 32-bit displacement at p. */
static int64_t
plt_disp32(const uint8_t *p)
{
	return (int64_t)(int32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Where the instruction of a PLT stub starts in code: past an endbr64 and a bnd prefix. */
static size_t
plt_skip_prefixes(const uint8_t *code, size_t len)
{
	size_t i = 0;

	if (len >= 4 && !memcmp(code, "\xf3\x0f\x1e\xfa", 4))
		i = 4;
	if (i < len && code[i] == 0xf2)	/* bnd prefix */
		i++;
	return i;
}

/* Finds the GOT slot an indirect jump or call at code reads: "ff 25/15 disp32", after endbr64/bnd. */
static uint64_t
plt_got_of(const uint8_t *code, size_t len, uint64_t addr)
{
	size_t i = plt_skip_prefixes(code, len);

	if (i + 6 > len || code[i] != 0xff || (code[i + 1] != 0x25 && code[i + 1] != 0x15))
		return 0;
	return addr + i + 6 + plt_disp32(code + i + 2);
}

int
plt_is_stub_jump(const uint8_t code[PLT_STUB_JUMP_LEN])
{
	size_t i = plt_skip_prefixes(code, PLT_STUB_JUMP_LEN);

	return i + 6 <= PLT_STUB_JUMP_LEN && code[i] == 0xff && code[i + 1] == 0x25;
}

uint64_t
plt_call_slot(const struct jt_mem_ops *mem, uint64_t ret)
{
	uint8_t call[PLT_CALL_LEN], stub[16];
	uint64_t plt;

	if (mem->read(mem->arg, ret - PLT_CALL_LEN, call, sizeof(call)) < 0)
		return 0;
	if (call[0] == 0xff && call[1] == 0x15)	/* call *slot(%rip), -fno-plt */
		return plt_got_of(call, sizeof(call), ret - PLT_CALL_LEN);
	if (call[1] != 0xe8)	/* call rel32 to a PLT stub */
		return 0;
	plt = ret + plt_disp32(call + 2);
	return mem->read(mem->arg, plt, stub, sizeof(stub)) == 0 ? plt_got_of(stub, sizeof(stub), plt) : 0;
}
