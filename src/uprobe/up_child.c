/* up_child.c - the uprobe source's trap bytes taken out of a forked child that is not traced. */
#include <pthread.h>
#include <stdint.h>

#include "arch.h"
#include "mem.h"
#include "modules.h"
#include "proc.h"
#include "up_child.h"
#include "uprobes.h"

/* Puts the file's byte back at addr in child when a trap byte is there; -1 when it cannot. */
static int
up_child_clean(struct jt_proc *parent, pid_t child, uint64_t addr)
{
	struct jt_module *m;
	uint8_t now, orig;
	int r;

	/* An entry and its return may share the trap byte: the first of them cleans it. */
	if (mem_read(child, addr, &now, 1) < 0 || now != ARCH_TRAP_BYTE)
		return 0;
	pthread_mutex_lock(&parent->mods.elf_lock);
	m = modules_find(&parent->mods, addr);
	r = m ? module_read_code(m, addr, &orig, 1) : -1;
	pthread_mutex_unlock(&parent->mods.elf_lock);
	if (r < 0 || orig == ARCH_TRAP_BYTE)
		return -1;
	return mem_write(child, addr, &orig, 1);
}

/*
 * fork copies the parent's pages with the kernel's uprobe trap bytes in
 * them, and on the BPF path the kernel leaves them there: uprobe_multi's
 * handler only skips a process its pid filter rejects. A child that is not
 * followed then trapped into the kernel at every allocator call for its
 * whole life (a fork child's malloc+free pair: 1,790 ns against 16
 * untraced). (On the perf path the kernel takes a site's byte out of the
 * child at its first hit there, which its filter refuses.) Its copy gets
 * the file's bytes back, as the ptrace source's breakpoints do
 * (bp_restore_into): the write makes the page the child's own. The kernel
 * does not mind: a probe's removal that finds no trap byte in a process
 * leaves its page alone.
 */
int
up_child_release(struct jt_proc *parent, pid_t child)
{
	int failed = 0;

	/*
	 * A return probe sits at the entry or at the entry's site
	 * (uprobes_sites.c; its jt_usite.site is the entry either way): both
	 * are looked at.
	 */
	for (size_t i = 0; i < parent->nusites; i++) {
		const struct jt_usite *s = parent->usites[i];

		if (up_child_clean(parent, child, s->site) < 0 ||
		    (s->entry != s->site && up_child_clean(parent, child, s->entry) < 0))
			failed = 1;
	}
	return failed ? -1 : 0;
}
