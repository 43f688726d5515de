/* image_taken.c - the breakpoints the kernel took back: an allocator's moved past its first instruction, a rendezvous put back. */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "bp.h"
#include "heap.h"
#include "image.h"
#include "image_int.h"
#include "mem.h"
#include "modules.h"
#include "proc.h"
#include "procfs.h"
#include "tracer.h"
#include "util.h"

/* The breakpoints bp_check_taken found, to be replaced once it is done with the table. */
struct image_taken {
	int fn[FN_MAX];
	uint64_t entry[FN_MAX];
	uint64_t addr[FN_MAX];	/* where the breakpoint was: its calls' return trampoline */
	size_t n;
	pid_t pid;
	int rtld;		/* a rendezvous put back */
};

static void
image_on_taken(void *arg, struct jt_bp *bp)
{
	struct image_taken *tk = arg;

	/*
	 * A rendezvous (the dynamic linker's, or the program's entry): the
	 * kernel puts an instruction back, ours too, in every process that
	 * ever had a uprobe, when a uprobe there is unregistered (a bpftrace
	 * on the linker ending, a jmptrace --source uprobe's links closing):
	 * the next dlopen went unseen, and its library's allocators with it.
	 * Its instruction is a return and cannot be moved past: it goes back
	 * in place, and the link map is read now (image_check_taken). While a
	 * uprobe stays registered there, the kernel takes each hit and the
	 * byte again, and each check (every 200 ms) reads the link map.
	 */
	if (alloc_fns[bp->fn].kind == FK_RTLD) {
		if (bp_put_back(bp, tk->pid) == 0)
			tk->rtld = 1;
		return;
	}
	if (tk->n < FN_MAX) {
		tk->fn[tk->n] = bp->fn;
		tk->addr[tk->n] = bp->addr;
		tk->entry[tk->n++] = bp->entry;
	}
}

/*
 * The calls in flight whose return address we replaced by the taken
 * breakpoint's address (call.c returns through the function's own
 * breakpoint): that address is plain code now, and a return there would
 * run the function again. Each gets its real return address back and is
 * forgotten (its block is not recorded).
 */
static void
image_unhijack(struct jt_tracer *tr, struct jt_proc *p, uint64_t addr)
{
	for (size_t i = 0; i < ARRAY_SIZE(tr->threads); i++)
		for (struct jt_thread *t = tr->threads[i]; t; t = t->hnext) {
			if (t->proc->vm_owner != p)
				continue;
			for (int k = t->ncalls - 1; k >= 0; k--) {
				struct jt_call *c = &t->calls[k];

				if (c->fn == CALL_SIGNAL || c->trampoline != addr)
					continue;
				mem_write(t->tid, c->entry_sp, &c->ret_addr, sizeof(c->ret_addr));
				memmove(c, c + 1, (size_t)(t->ncalls - k - 1) * sizeof(*c));
				t->ncalls--;
			}
		}
}

void
image_check_taken(struct jt_tracer *tr, struct jt_proc *p)
{
	struct image_taken tk = { .n = 0, .pid = p->pid };
	uint64_t random;
	char why[640];

	/*
	 * Not while an exec of it waits to be handled: its memory is the new
	 * image's, our table the old one's, and a byte there that happened to
	 * equal an old instruction's was taken for a take, and a trap byte
	 * written into the new image (a process that execs every 5 ms, -p 30
	 * times: one died of SIGTRAP). The exec's stop sets the table right.
	 */
	if (p->image_random && (procfs_auxv(p->pid, AT_RANDOM, &random) < 0 || random != p->image_random))
		return;
	if (p->vm_owner != p || !bp_check_taken(&p->bps, p->pid, image_on_taken, &tk))
		return;
	if (tk.rtld) {
		debug_msg("process %d: the kernel took the dynamic linker's breakpoint back (a uprobe there ended?): "
			  "put back, and its link map read now", p->pid);
		proc_unwinds_quiesce(tr, p);
		(void)image_update(p, 0);
		proc_unwinds_allow(p);
	}
	for (size_t i = 0; i < tk.n; i++)
		image_unhijack(tr, p, tk.addr[i]);
	for (size_t i = 0; i < tk.n; i++) {
		struct jt_module *m = modules_find(&p->mods, tk.entry[i]);
		int fn = tk.fn[i];
		/* One already moved past its first instruction has no second move. */
		const char *fail = tk.addr[i] != tk.entry[i] || !m ? IMAGE_TAKEN_BP
								     : image_place_moved(p, m, fn, tk.entry[i], IMAGE_TAKEN_BP);
		uint64_t now = heap_clock_ms(p->heap);

		/* Its calls from the take to now were missed either way: jmptrace never saw them. */
		if (fail)
			snprintf(why, sizeof(why), "%s; its calls are not counted", fail);
		else
			snprintf(why, sizeof(why), "%s; its calls until %lu ms may be missing, later ones are counted "
				 "(its breakpoint moved past its first instruction)", IMAGE_TAKEN_BP, (unsigned long)now);
		error_msg("%s in %s: %s", alloc_fns[fn].name, m ? m->path : "?", why);
		if (!m)
			continue;
		image_untraced_add(p, m, fn, tk.entry[i], fail ? fail : IMAGE_TAKEN_BP);
		p->untraced[p->nuntraced - 1].missed_until_ms = fail ? 0 : now ? now : 1;
	}
}

