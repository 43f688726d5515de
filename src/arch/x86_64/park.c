/* park.c - x86-64 park code: `syscall` calling pause(), or `jmp .`. */
#include <sys/syscall.h>

#include "park.h"

static const uint8_t park_syscall[ARCH_PARK_CODE_LEN] = { 0x0f, 0x05 };	/* syscall */
static const uint8_t park_spin[ARCH_PARK_CODE_LEN] = { 0xeb, 0xfe };	/* jmp . */

const uint8_t *
arch_park_bytes(enum arch_park_code code)
{
	return code == ARCH_PARK_SPIN ? park_spin : park_syscall;
}

void
arch_park_setup(arch_regs *r, enum arch_park_code code, uint64_t pc)
{
	r->rip = pc;
	if (code == ARCH_PARK_SYSCALL)
		r->rax = SYS_pause;
	r->orig_rax = (unsigned long)-1;
}
