/* uprobes.h - the kernel uprobe event source: allocator entries and returns as BPF records in one ring, or perf samples in a ring per thread. */
#ifndef JT_UPROBES_H
#define JT_UPROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct jt_tracer;
struct jt_proc;
struct jt_thread;
struct jt_module;
struct jt_uprobes;
struct jt_unwind_ctx;
struct up_def;

/* One probe site of one process image: an allocator's entry, or its return (a uretprobe). */
struct jt_usite {
	int fn;			/* enum jt_fn */
	int ret;		/* a return probe: the sample is the call's return */
	uint64_t entry;		/* the function's entry in the process */
	uint64_t site;		/* where the probe is: entry, or past a harmless early-return test */
	uint64_t sp_delta;	/* what the skipped instructions took off the stack pointer */
	uint64_t image;		/* the image it was placed in (jt_proc.image): a sample of an older one is dropped */
	uint32_t stack;		/* bytes of user stack each sample copies */
	uint64_t regs_mask;	/* the registers each sample carries (perf_regs.h) */
	uint32_t nregs;		/* how many: regs_mask's bits, counted once (no popcnt instruction on every x86-64) */
	int emulated;		/* the kernel emulates the probed instruction (no single-step) */
	int hook;		/* no sample: a SIGTRAP stops the thread (the rendezvous, a C++ unwinder) */
	int pending;		/* placed, its events not opened yet (uprobes_open_pending) */
	struct up_def *def;	/* the kernel's probe definition it is opened on (uprobes.c); NULL on the BPF path but for a hook */
	uint32_t index;		/* its place among the session's sites: the BPF path's cookie names it so */
	uint64_t file_off;	/* the BPF path: its offset in path, its module's file */
	char *path;		/* the BPF path: until it is linked (uprobes_bpf.c) */
	/*
	 * The BPF path: a call whose entry and return make one record
	 * (up_bpf_cookie's join), and the site of its other end.
	 */
	int join;
	const struct jt_usite *pair;
	/* The BPF path: a free whose record waits for its thread's next (up_bpf_cookie's defer). */
	int defer;
};

/* One sample, parsed: registers at the probe and the stack copied from their stack pointer. */
struct jt_usample {
	const struct jt_usite *site;
	pid_t pid, tid;
	uint64_t time;		/* UTIL_CLOCK (perf's clockid), ns */
	arch_regs regs;
	const uint8_t *stack;	/* [regs' sp, + stack_len), or NULL */
	size_t stack_len;
};

/*
 * What the source does with each sample, in the order the merge of the rings
 * gives (uevent_apply, which main.c passes in: the meaning of a sample sits
 * above the source that reads it). Returns non-zero when it was an event.
 */
typedef int (*uprobes_apply_fn)(struct jt_tracer *tr, struct jt_unwind_ctx *ctx, const struct jt_usample *s);

/*
 * How the uprobe source works. jmptrace still seizes every thread with
 * ptrace, for what is rare and must be seen in order (exec, fork, clone,
 * exit, signals, the dynamic linker's rendezvous, _exit under --leak-check),
 * but the allocators' entries and returns are kernel uprobes: a perf event
 * per (thread, probe), opened with perf_event_open's uprobe PMU on the
 * thread alone, so that no other process that maps the same library traps.
 * A hit copies the registers and the top of the user stack into the ring
 * buffer of its thread and the thread runs on: nothing stops it. The rings
 * are read by a reader thread of jmptrace, and by whoever handles a ptrace
 * stop first (uprobes_drain), merged by their timestamps, so that a free on
 * one thread and the malloc on another that returns the same block apply in
 * order. When jmptrace's descriptors close, for any reason, SIGKILL
 * included, the kernel removes the probes.
 *
 * That is the perf path. Where the kernel makes BPF uprobe_multi links
 * (uprobes_bpf.c, up_bpf.c) a BPF program in links per process and file
 * writes every thread's hits into one ring instead, in one order: no events
 * per thread, no merge, and the hooks' SIGTRAPs sent by the program. The
 * path is chosen at uprobes_new, by trying; the rest of this interface is
 * the same on both.
 */

/*
 * Whether this host and user can use it: the uprobe PMU exists and the
 * caller has CAP_PERFMON or CAP_SYS_ADMIN. Returns 0, or -1 with why set.
 */
int uprobes_usable(const char **why);

/*
 * The session's source: each sample goes to apply, stack_copy bytes of user
 * stack per entry sample, ring_bytes per traced thread (a power of two of
 * pages) while the rings of all threads stay within ring_total; past it a
 * new thread's ring is halved until it fits, down to UPROBES_RING_MIN.
 * Returns NULL after saying why. bpf_only (--source auto): NULL, said
 * only under -v, unless the BPF path is taken (the perf path costs a
 * second or more per traced process).
 */
struct jt_uprobes *uprobes_new(struct jt_tracer *tr, uprobes_apply_fn apply, uint32_t stack_copy,
			       uint64_t ring_bytes, uint64_t ring_total, int bpf_only);
/*
 * The way out of a dying jmptrace (emerg.c), once its tracees are let go:
 * async-signal-safe, it unmaps every ring, closes every descriptor but the
 * standard ones and removes the session's probe definitions from tracefs,
 * which the kernel would otherwise keep after jmptrace's end. NULL is a no-op.
 */
void uprobes_emerg_release(const struct jt_uprobes *u);
/* Stops the reader, closes every event (the kernel removes the probes) and frees u. NULL is a no-op. */
void uprobes_free(struct jt_uprobes *u);

/* Starts the reader thread (once the tracer lock exists and the first probes are placed). Returns 0 or -1. */
int uprobes_start(struct jt_uprobes *u);

/*
 * Probes fn in p: its entry is entry, in module m; site is where the entry
 * probe goes (entry, or past a harmless early-return test, sp_delta below
 * it), emulated whether the kernel emulates that instruction. A function
 * that returns a block gets a uretprobe on its entry too. Its events are
 * opened by uprobes_open_pending. Returns 0, or -1 with errno set.
 */
int uprobes_place(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, int fn, uint64_t entry,
		  uint64_t site, uint64_t sp_delta, int emulated);

/*
 * A hook: fn (the dynamic linker's rendezvous, a C++ unwinder's entry)
 * must be handled with the thread stopped. Its uprobe sends the thread a
 * SIGTRAP (perf's sigtrap; on the BPF path bpf_send_signal_thread, after
 * a record that says so), which ptrace reports as a signal stop: see
 * uprobes_hook_of. Returns 0, or -1 with errno set.
 */
int uprobes_place_hook(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, int fn, uint64_t entry);

/*
 * The dynamic linker's rendezvous at entry in m. A launched program gets a
 * hook: a dlopen'd library is probed before any of its code runs. An
 * attached one gets a plain probe whose sample makes jmptrace re-read the
 * link map a moment later (uevent.c, loop.c): should jmptrace die while a hook's
 * SIGTRAP waits for it, the kernel would deliver that SIGTRAP to the
 * process, which a launched program does not outlive anyway.
 */
int uprobes_place_rendezvous(struct jt_uprobes *u, struct jt_proc *p, const struct jt_module *m, uint64_t entry);

/* The sig_data of a hook's SIGTRAP: this magic, the fn in the low 16 bits. */
#define UPROBES_SIG_MAGIC 0x6a6d747200000000ULL	/* "jmtr" */
#define UPROBES_TRAP_PERF 6			/* si_code TRAP_PERF (Linux 5.13) */

/*
 * t sits in a SIGTRAP signal-delivery-stop (what the rings held applied
 * before): when one of our hooks sent it, returns the hook's fn (the
 * signal is ours to drop); otherwise -1.
 */
int uprobes_hook_of(struct jt_uprobes *u, struct jt_thread *t);

/* Bytes of stack a free's sample copies (at most --stack-copy). */
#define UPROBES_FREE_COPY 512
/* A site's stack copy without --stack-copy, where the BPF path knows no stack top (the perf path's always). */
#define UPROBES_STACK_DEFAULT 4096

/* The smallest ring a thread gets when the rings' budget (--buffer-total) is spent. */
#define UPROBES_RING_MIN ((uint64_t)512 << 10)

/* Non-zero when fn gets a uretprobe as well as its entry probe: it returns a block, or is a named free (alloc.h). */
int uprobes_has_return(int fn);

/*
 * Opens the probes placed in p since the last call, for every thread of p,
 * with the tracer lock (held by the caller) released meanwhile (but in a
 * sample's work in uprobes_drain); they count from the return on. refused(arg, s, errno) is told of a site the kernel would not probe.
 * Called once a placement ends, before p's stopped thread runs on.
 */
void uprobes_open_pending(struct jt_uprobes *u, struct jt_proc *p,
			  void (*refused)(void *arg, const struct jt_usite *s, int err), void *arg);

/* Opens every probe of t's process for t, a thread new to us. Returns 0 or -1. */
int uprobes_thread_add(struct jt_uprobes *u, struct jt_thread *t);

/* p's image ends (exec): its probes are forgotten (the kernel took their events off). */
void uprobes_image_end(struct jt_uprobes *u, struct jt_proc *p);

/*
 * Applies, in time order, every sample the rings hold that was taken before
 * this call began (tr->tthreads.lock held); later ones wait for the next
 * call. Called before any ptrace stop is handled, so that the stop sees
 * every event its thread made before it.
 */
void uprobes_drain(struct jt_uprobes *u);

/*
 * Applies every event made until now, for a snapshot, a leak check, an
 * exec or a detach: a drain, and on the BPF path the frees that threads
 * deferred into their next record (up_bpf_abi.h's struct up_bpf_pf), which
 * a drain leaves where they are: every one of a thread that is stopped
 * (held, the thread whose stop is being handled, or NULL, counts as one),
 * a running thread's made a moment before the drain.
 */
void uprobes_settle(struct jt_uprobes *u, const struct jt_thread *held);

/*
 * Before a detach, every thread stopped: applies what the rings hold and
 * closes every event, so that the kernel takes the probes out before the
 * threads run on untraced (no hook's SIGTRAP can reach them then).
 */
void uprobes_detach(struct jt_uprobes *u);

/* Events the kernel dropped because a ring was full, and samples applied, so far. */
uint64_t uprobes_lost(const struct jt_uprobes *u);
uint64_t uprobes_samples(const struct jt_uprobes *u);

#endif
