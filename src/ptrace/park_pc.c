/* park_pc.c - where a stopped thread's pc can be set to run code of its own process: a system call instruction, a jump to itself. */
#include <stdlib.h>
#include <string.h>

#include "maps.h"
#include "mem.h"
#include "park.h"
#include "park_pc.h"
#include "proc.h"
#include "util.h"

/* Looks for the bytes of code in one mapping, at an address the CPU can run them from. Returns it or 0. */
static uint64_t
park_pc_find_bytes(pid_t pid, uint64_t start, uint64_t end, const uint8_t *code)
{
	static const size_t chunk = 16384;
	const size_t n = ARCH_PARK_CODE_LEN;
	uint8_t *buf = xcalloc(1, chunk);
	uint64_t found = 0;

	/* Look at the first MiB only: the vDSO is two pages, and a libc has both early. */
	if (end - start > (1u << 20))
		end = start + (1u << 20);
	/* Chunks overlap by n - 1 bytes, so code across a chunk boundary is seen too. */
	for (uint64_t a = start; a + n <= end && !found; a += chunk - (n - 1)) {
		size_t len = end - a < chunk ? end - a : chunk;

		if (mem_read(pid, a, buf, len) < 0)
			break;
		for (size_t i = 0; i + n <= len; i++)
			if ((a + i) % ARCH_PARK_CODE_ALIGN == 0 && memcmp(buf + i, code, n) == 0) {
				found = a + i;
				break;
			}
	}
	free(buf);
	return found;
}

/*
 * Finds park code anywhere in the process's executable memory, the vDSO
 * first (every process has one, static ones too). The CPU decodes from
 * wherever pc points, so it need not be on an instruction boundary of the
 * code around it.
 */
static uint64_t
park_pc_find(struct jt_proc *p, enum arch_park_code code)
{
	struct jt_maps m;
	uint64_t found = 0;

	if (maps_read(p->pid, &m) < 0)
		return 0;
	for (int pass = 0; pass < 2 && !found; pass++)
		for (size_t i = 0; i < m.n && !found; i++) {
			const struct maps_entry *e = &m.v[i];

			if (e->x && (pass == 0) == (strcmp(e->name, "[vdso]") == 0))
				found = park_pc_find_bytes(p->pid, e->start, e->end, arch_park_bytes(code));
		}
	maps_clear(&m);
	return found;
}

uint64_t
park_pc_syscall(struct jt_proc *p)
{
	if (!p->park_pc)
		p->park_pc = park_pc_find(p, ARCH_PARK_SYSCALL);
	return p->park_pc;
}

uint64_t
park_pc_spin(struct jt_proc *p)
{
	if (!p->spin_pc)
		p->spin_pc = park_pc_find(p, ARCH_PARK_SPIN);
	return p->spin_pc;
}
