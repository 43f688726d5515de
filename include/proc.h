/* proc.h - control blocks for traced processes and threads, and the tracer session that owns them. */
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
#include "tthread.h"

#define JT_MAX_CALLS 16		/* allocator calls in flight on one thread (signal handlers nest) */
#define JT_MAX_DEPTH 256

struct leak_result;
struct jt_growth;

/* One allocator call in flight whose return we wait for. */
struct jt_call {
	int fn;			/* enum jt_fn */
	uint64_t entry_sp;	/* stack pointer at entry: the slot that holds the return address */
	uint64_t ret_addr;	/* the real return address, replaced by the trampoline */
	uint64_t trampoline;	/* where the call now returns: the function's own entry breakpoint */
	uint64_t size;		/* bytes requested */
	uint64_t ptr_arg;	/* realloc's old block, posix_memalign's out pointer */
	uint32_t stack_id;	/* in the heap's stack table, or for a pages function (--pages) the pages' */
	uint64_t len2;		/* --pages: mremap's old length */
	uint64_t flags;		/* --pages: mmap's and mremap's flags */
};

/*
 * Where a traced thread is, as far as we are concerned. A thread is in one
 * of these at a time; read them through the predicates below.
 *   RUNNING -> STOPPING: we PTRACE_INTERRUPT it (attach, a step, a detach, a recall)
 *     or its own stop was met while its process is being stopped (stopall_take)
 *   STOPPING -> STOPPED or GROUP_STOPPED: its stop is collected (stopall_collect)
 *   RUNNING -> STOPPED: a breakpoint stop kept for a step or a hand-over
 *   STOPPED, GROUP_STOPPED -> RUNNING: restart_stopped
 *   STOPPED, GROUP_STOPPED -> IN_TRANSIT: handover_send; back to one of them at handover_receive
 */
enum jt_thread_state {
	TS_RUNNING = 0,		/* runs, or sits in a stop being handled now: we wait for nothing */
	TS_STOPPING,		/* we asked it to stop and wait for that stop */
	TS_STOPPED,		/* it sits in a stop we hold: restart with PTRACE_CONT, delivering pending_sig */
	TS_GROUP_STOPPED,	/* it sits in a group-stop we hold: restart with PTRACE_LISTEN */
	TS_IN_TRANSIT,		/* parked, in owner's inbox, traced by nobody */
};

/* Everything about one traced thread (strace's tcb). */
struct jt_thread {
	pid_t tid;
	struct jt_proc *proc;
	struct jt_thread *hnext;	/* tid hash chain */
	struct jt_call calls[JT_MAX_CALLS];
	int ncalls;
	uint64_t seq;			/* events seen on this thread */
	/* The last free-family entry, so that delete -> free counts once. */
	uint64_t free_seq, free_sp, free_ptr;
	int free_fn;
	/* Its last allocation, until its next free: a free of it is temporary (heaptrack's sense). */
	uint64_t last_alloc;
	uint64_t resume_pc, resume_sp;	/* pc and stack pointer our last breakpoint hit let it go on with */
	/*
	 * Its event is handled; it must still step over step_addr. Orthogonal
	 * to state: the work goes with it while it is held, handed over or
	 * parked, until stopall.c steps it (or a detach drops it).
	 */
	int step_pending;
	uint64_t step_addr;
	uint64_t wb_addr;		/* target bytes held back to write in one go (call.c) */
	size_t wb_len;
	uint8_t wb_buf[32];
	enum jt_thread_state state;	/* where it is as far as we are concerned (thread_is_stopped...) */
	int pending_sig;		/* a signal for the program we hold while it is stopped */
	/*
	 * Resumed from a vfork event: waits in the kernel for its child (until
	 * its next stop). A fact about the kernel side, orthogonal to state: it
	 * cannot stop meanwhile, so it counts as stopped for whole-process work.
	 */
	int vforking;
	struct jt_tthread *owner;	/* the tracer thread that traces it (or is being handed it) */
	int active;			/* it hit a breakpoint at least once (counted in owner->nactive) */
	struct jt_thread *inext;	/* inbox or deferred list link */
	arch_regs park_regs;		/* its real registers while parked */
	uint64_t park_mask;		/* its real signal mask while parked */
	int pin_cpu;			/* --pin: the CPU we pinned it to, or -1 */
	int born_traced;		/* created while we traced its process (or its parent) */
	cpu_set_t pin_saved;		/* --pin: its affinity before, given back at detach */
	/* --source uprobe (uprobes.c): its perf events, one per probe, and the ring they write into. */
	int *ufds;
	int nufds;
	struct up_ring *uring;
};

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
	uint64_t mods_gen;		/* modules generation the breakpoints were resolved for */
	uint64_t calls[FN_MAX];		/* by enum jt_fn, then the functions named by --alloc */
	int preset_seen;		/* 1 + the --alloc-preset not asked for whose malloc it defines, or 0 */
	/* Traced functions without a breakpoint (image.c), in any image it ran: kept for every report. */
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
	size_t json_timeline;		/* the samples of its timeline the JSON file already holds */
	size_t json_pages_timeline;	/* and of its pages' timeline (--pages) */
};

/* Options from the command line. */
struct jt_options {
	const char *out_path;		/* -o */
	const char *json_path;		/* --json */
	unsigned top;			/* --top */
	unsigned top_rest;		/* the text report's other sections' top: --top's (UINT_MAX) or 3 */
	unsigned sections;		/* --sections: 1 << enum report_section each; 0 for all */
	int show_runtime;		/* --show-runtime: no runtime rules (supp_add_runtime) */
	unsigned depth;			/* --depth */
	pid_t attach_pid;		/* -p */
	int follow_forks;		/* -f */
	double duration;		/* --duration */
	unsigned tracer_threads;	/* --tracer-threads: 1..JT_MAX_TTHREADS, 0 for one per CPU */
	const char *unwinder;		/* --unwinder: a backend name unwind_backend_known accepts */
	int no_cpu_follow;		/* --no-cpu-follow: leave scheduling alone (for measurements) */
	int no_emulate;			/* --no-emulate: step over every displaced instruction */
	int source_uprobe;		/* --source uprobe: allocator events from kernel uprobes (uprobes.h) */
	uint32_t stack_copy;		/* --stack-copy: bytes of user stack each uprobe sample copies */
	uint64_t buffer_size;		/* --buffer-size: bytes of ring buffer per CPU */
	int verbose;			/* -v: a debug line per decision on stderr */
	int pin;			/* --pin: pin the program's threads to their tracer thread's CPU */
	int sort;			/* --sort: enum report_cost */
	int cost;			/* --folded-cost: enum report_cost */
	uint64_t min_size, max_size;	/* --min-size, --max-size (0 when not given: no bound) */
	const char *pprof_path;		/* --pprof */
	const char *folded_path;	/* --folded */
	const char *flame_path;		/* --flamegraph */
	const char *massif_path;	/* --massif */
	const char *csv_path;		/* --csv */
	const char *dot_path;		/* --dot */
	const char *html_path;		/* --html */
	double interval;		/* --interval: seconds between snapshots, 0 for none */
	double older_than;		/* --older-than: seconds a block must be old to count as live, 0 for none */
	const char *supp_path;		/* --suppressions */
	int no_default_supp;		/* --no-default-suppressions */
	int full_names;			/* --full-names: C++ functions named in full, not short (cxxname.h) */
	int leak_check;			/* --leak-check */
	int pages;			/* --pages: mmap/munmap/mremap/sbrk/brk made outside the allocator, by stack */
	unsigned leak_heuristics;	/* --leak-heuristics: enum leak_heuristic bits */
	unsigned show_leak_kinds;	/* --show-leak-kinds: 1 << enum leak_kind per kind listed */
	char **argv;			/* program and arguments in launch mode */
};

struct jt_json_out;
struct jt_html_out;
struct jt_outfile;
struct jt_supp;
struct jt_due;
struct jt_unwind_ctx;
struct jt_uprobes;
struct jt_usite;
struct up_ring;

/*
 * The tracer session: every process and thread, and where reports go.
 * Shared by the tracer threads: whoever touches it holds tthreads.lock.
 */
struct jt_tracer {
	struct jt_tthreads tthreads;	/* the tracer threads, and the lock */
	struct jt_proc *recall;		/* every thread of this process is being brought to tracer thread 0 */
	struct jt_thread *deferred;	/* arrived at tracer thread 0 during a recall, to handle after it */
	unsigned long ptrace_options;	/* PTRACE_O_* every seized thread gets */
	const struct jt_options *opt;
	struct jt_proc *procs;
	/*
	 * Processes that ended with a report due (lifecycle_exited), unlinked
	 * from procs, oldest first: the loop writes each one's report and frees
	 * it, after the stop it ended in is handled.
	 */
	struct jt_proc *ended;
	struct jt_thread *threads[1024];	/* tid hash */
	struct jt_uprobes *uprobes;	/* --source uprobe's event source, or NULL */
	struct jt_json_out *json;
	struct jt_html_out *html;	/* --html's page, or NULL */
	FILE *out;			/* text reports */
	struct jt_outfile *out_file;	/* -o's output under out, or NULL for stderr */
	struct jt_outfile *formats[6];	/* the file formats' outputs, in snapshot.h's order, or NULL */
	int report_failed;		/* a report could not be written: jmptrace exits 1 */
	struct jt_supp *supp;		/* suppressions (--suppressions and the built-in ones) */
	unsigned nsnapshots;		/* snapshots written so far: the number of the next file */
	/* --interval and --duration (loop.c): snapshots due at fixed times of the main process's time_ms. */
	uint64_t origin_us;		/* its time_ms 0, on util_now_us's clock */
	uint64_t start_ms;		/* when the loop began, in time_ms: both count from there */
	uint64_t due_ms;		/* the next one due, in time_ms; 0 for none */
	int due_armed;			/* the timer is set for due_ms itself, not a little before */
	char late_why[96];		/* the work that ran past due_ms and for how long; "" while none did */
	const struct jt_due *due;	/* while a scheduled snapshot is written: when it was due */
	/*
	 * What every thread handed to a tracer thread gets on arrival, in every
	 * handover_receive (a recall's too): loop.c's pins it (--pin) and then
	 * calls stopall_arrived. Set before a second tracer thread starts (only
	 * the loop starts them), so that handover, below stopall, never calls it.
	 */
	void (*arrived)(struct jt_tracer *tr, struct jt_thread *t);
	/* Called by thread_free before a thread block goes (uprobes.c closes its events), or NULL. */
	void (*thread_gone)(struct jt_tracer *tr, struct jt_thread *t);
	pid_t main_pid;
	int main_exited, main_status;	/* wait status of the main process */
	uint64_t events;		/* breakpoint hits handled */
	int image_seen;			/* the first program image was set up */
	int fatal;			/* the program cannot be traced; stop */
	int bad_names;			/* a function named by --alloc is defined nowhere: exit status 2 */
	int detached;			/* we let the attached process go */
	int detaching;			/* letting every process go: hold every thread that stops */
	int show_status;		/* print a status line (attached, stderr a terminal) */
	int status_shown;
	uint64_t status_ms, status_events;
};

/* It sits in a stop we hold (a group-stop too). */
static inline int
thread_is_stopped(const struct jt_thread *t)
{
	return t->state == TS_STOPPED || t->state == TS_GROUP_STOPPED;
}

/* We asked it to stop: its next stop is collected, not handled (stopall_collect). */
static inline int
thread_wants_stop(const struct jt_thread *t)
{
	return t->state == TS_STOPPING || thread_is_stopped(t);
}

/* Parked on its way to another tracer thread: nobody traces it. */
static inline int
thread_in_transit(const struct jt_thread *t)
{
	return t->state == TS_IN_TRANSIT;
}

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
void proc_reset_image(struct jt_proc *p);

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


#endif
