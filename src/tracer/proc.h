/* proc.h - the control block of one traced process image, and the process and thread tables of the session. */
#ifndef JT_PROC_H
#define JT_PROC_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "alias.h"
#include "arch.h"
#include "alloc.h"
#include "bp.h"
#include "modules.h"
#include "own.h"
#include "thread.h"

struct leak_result;
struct jt_growth;
struct jt_tracer;
struct jt_tthread;
struct jt_unwind_ctx;
struct jt_uprobes;
struct jt_usite;

enum { SIGTRAP_UNKNOWN, SIGTRAP_CAUGHT };

/* One process's SIGTRAP handler (sigtrap.c), as far as we learned it. */
struct jt_sigtrap {
	int kind;			/* SIGTRAP_*: UNKNOWN means there is nothing to keep */
	struct arch_ksigaction act;	/* its sigaction, to put back */
};

/* One traced process image. */
struct jt_proc {
	pid_t pid;
	struct jt_proc *next;
	int nthreads;
	int attached;			/* we attached to it: older blocks are unknown */
	int unseen_blocks;		/* it may free blocks we never saw allocated (attached, or
					   inherited at fork): such a free is unknown, not invalid */
	int vfork_child;		/* shares its parent's memory: emulate only, record nothing */
	struct jt_proc *vm_owner;	/* whose breakpoints are in this memory (itself, or the vfork parent) */
	char *command;			/* its command line, as ps shows it (proc_name) */
	char *exe;			/* its executable's file, symlinks resolved, or NULL */
	char *exe_named;		/* the path it was run by, a symlink's own name kept, or NULL */
	struct jt_modules mods;
	struct jt_bps bps;
	struct jt_sym *sym;
	struct jt_unwind *uw;
	/*
	 * Unwinds of its threads in progress outside the tracer lock
	 * (proc_unwind), and how many tracer threads wait for them to end
	 * before changing what they read: the module set, the breakpoint
	 * table, the unwinder, the thread blocks (proc_unwinds_quiesce).
	 */
	int unwinding, unwind_block;
	const char *unwinder;		/* its backend (--unwinder), for the unwinder of a new image */
	struct jt_heap *heap;
	/*
	 * --pages: the anonymous private mappings and brk growth the program
	 * made itself, one region a block (pages.h), or NULL; and the break
	 * as its last sbrk or brk left it, 0 before one.
	 */
	struct jt_heap *pages;
	uint64_t brk_cur;
	struct jt_growth *growth;	/* its stacks' live bytes at each snapshot (growth.h) */
	int is_static;			/* statically linked: no dynamic linker, local symbols count */
	uint64_t r_debug;		/* address of the dynamic linker's _r_debug, or 0 */
	uint64_t entry_bp;		/* the program's entry: a rendezvous until the linker's reports (image.c) */
	uint64_t image_random;		/* its image's AT_RANDOM: another one means an exec not handled yet */
	uint64_t mods_gen;		/* modules generation the breakpoints were resolved for */
	int rtld_due;			/* --source uprobe, attached: its rendezvous fired, the link map is to be re-read (loop.c) */
	uint64_t calls[FN_MAX];		/* by enum jt_fn, then the functions named by --alloc */
	int preset_seen;		/* 1 + the --alloc-preset not asked for whose malloc it defines, or 0 */
	int names_due;			/* the launched program's first image, dynamic: its --alloc names are
					   checked at its first consistent link map (image_update) */
	/* Traced functions without a breakpoint (image.c) in this image: kept for its every report. */
	struct jt_untraced *untraced;
	size_t nuntraced;
	struct jt_aliases aliases;	/* GOT slots naming aligned_alloc / memalign */
	struct jt_own own;		/* the C library's teardown code, whose frees are not the program's */
	uint64_t park_pc;		/* a system call instruction where handed-over threads wait (handover.c) */
	uint64_t spin_pc;		/* a jump to itself where they wait under seccomp */
	struct jt_sigtrap sigtrap;	/* its own SIGTRAP disposition, kept in place (sigtrap.c) */
	int exec_unseen;		/* exec'd while we let go: the new image has no breakpoints, no figures */
	const char *report_due;		/* the reason of a report lifecycle left for the loop to write ("exit", "exec"), or NULL */
	int exited, exit_status, killed_by;
	int leak_check;			/* --leak-check: a breakpoint on _exit, a check at every snapshot */
	int leak_due;			/* a thread of it entered _exit: check it before it goes on */
	struct leak_result *leak;	/* the last leak check's verdict, or NULL */
	/*
	 * --pin: the affinity of its first pinned thread. A thread created
	 * later inherits its creator's pinned affinity; this is what it gets
	 * back at detach.
	 */
	int pin_orig_set;
	cpu_set_t pin_orig;
	/* --source uprobe (uprobes.c): the source, and this image's probes. */
	struct jt_uprobes *uprobes;	/* the session's, or NULL with the ptrace source */
	uint64_t image;			/* a number no other image of any process had: a sample names it */
	struct jt_usite **usites;	/* its probes (owned by the source) */
	size_t nusites;
	uint64_t utramp;		/* the kernel's uretprobe trampoline in it, once seen, or 0 */
	/*
	 * The uprobe source: blocks a malloc found still live and dropped
	 * (heap_take_dropped), each with that malloc's time, oldest first. A
	 * free of the address made before that time is the dropped block's: a
	 * free the BPF path deferred, applied after another thread's malloc
	 * of the same block (uevent.c).
	 */
	struct jt_udrop *udrops;
	size_t nudrops;
	size_t json_timeline;		/* the samples of its timeline the JSON file already holds */
	size_t json_pages_timeline;	/* and of its pages' timeline (--pages) */
	unsigned execs;			/* the execs of its process traced before this image began */
	unsigned image_ended;		/* a block of an image an exec ended (proc_take_image): that
					   exec's number in its process, from 1; 0 for a running image */
};

/* One of jt_proc's udrops. */
struct jt_udrop {
	uint64_t addr;
	uint64_t time;		/* the malloc's that dropped it, UTIL_CLOCK ns */
	uint64_t image;		/* the image it was a block of */
	uint32_t stack_id;
};

struct jt_proc *proc_new(struct jt_tracer *tr, pid_t pid, const char *command);
void proc_free(struct jt_tracer *tr, struct jt_proc *p);
/* Takes p out of tr->procs (proc_find no longer finds it); p itself stays. */
void proc_unlink(struct jt_tracer *tr, struct jt_proc *p);
/*
 * Names p after the program its process runs: exe from /proc/PID/exe,
 * exe_named from the name execve was given, and, when cmdline is set,
 * command from /proc/PID/cmdline (a launched program keeps the argv it
 * was given instead). Call it with the process stopped on the image it
 * names: just attached, or at its exec event.
 */
void proc_name(struct jt_proc *p, int cmdline);
/* Gives p the names of from: a forked child runs its parent's program. */
void proc_name_as(struct jt_proc *p, const struct jt_proc *from);
struct jt_proc *proc_find(struct jt_tracer *tr, pid_t pid);
/* Resets the image state after execve: modules, symbols, breakpoints, live blocks. */
void proc_reset_image(struct jt_tracer *tr, struct jt_proc *p);

/*
 * At an exec of p, before proc_reset_image: moves what a report of the
 * image that ends reads (its live-block and stack tables with their
 * counters, peak and timeline, --pages' table, growth, calls, the
 * symbolizer with that image's modules in it, the functions it left
 * untraced, its names) into a new block, image_ended set, in no list of
 * tr's; p starts the new image from zero, on the same clock. The caller
 * writes its report or frees it (proc_free).
 */
struct jt_proc *proc_take_image(struct jt_tracer *tr, struct jt_proc *p);

/*
 * Unwinds thread t (stopped, traced by the calling tracer thread tt, whose
 * scratch is ctx) into pcs. With unlock set and no tracer thread waiting
 * in proc_unwinds_quiesce for t's process, the tracer lock (held on entry
 * and on return) is released meanwhile, so that the other tracer threads
 * go on with their stops: the unwind is the costly part of an allocation
 * event. Returns what unwind_stack_ctx returns.
 */
int proc_unwind(struct jt_tracer *tr, struct jt_thread *t, struct jt_unwind_ctx *ctx, const arch_regs *regs,
		uint64_t *pcs, int max, int unlock);

/*
 * Waits (tracer lock held, released meanwhile) until no unwind of p runs
 * outside the lock, and keeps new ones under the lock until
 * proc_unwinds_allow: call it before changing p's module set, breakpoint
 * table or unwinder, or freeing its thread blocks.
 */
void proc_unwinds_quiesce(struct jt_tracer *tr, struct jt_proc *p);
void proc_unwinds_allow(struct jt_proc *p);

/*
 * Calls fn on every thread of p but skip (may be NULL); fn may free the
 * thread. Stops early when p itself is gone meanwhile (a followed process
 * whose leader ended is freed with all its threads).
 */
void proc_each_thread(struct jt_tracer *tr, struct jt_proc *p, const struct jt_thread *skip,
		      void (*fn)(struct jt_tracer *, struct jt_thread *));

struct jt_thread *thread_find(struct jt_tracer *tr, pid_t tid);
struct jt_thread *thread_new(struct jt_tracer *tr, struct jt_proc *p, pid_t tid);
void thread_free(struct jt_tracer *tr, struct jt_thread *t);
/* Makes tracer thread to (or none) t's owner, moving its counts (ntracees, nactive) with it. */
void thread_set_owner(struct jt_thread *t, struct jt_tthread *to);


#endif
