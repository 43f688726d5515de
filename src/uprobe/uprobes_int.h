/* uprobes_int.h - private to the uprobe source (uprobes*.c): its session, shared by its jobs' files, and the BPF path's share of it. */
#ifndef JT_UPROBES_INT_H
#define JT_UPROBES_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "uprobes.h"

struct up_bpf;

/* One tracefs probe definition: a file offset, entry or return; shared by every site and process on it. */
struct up_def {
	char *path;
	uint64_t offset;
	int ret;
	uint64_t id;			/* its tracepoint id */
	int anchor;			/* an event of it on the keeper, so that closing ours never ends it (-1 until up_anchor) */
	int anchor_tried;
	char name[16];
};

struct jt_maps;

struct jt_uprobes {
	struct jt_tracer *tr;
	uprobes_apply_fn apply;	/* what each sample means (uevent_apply) */
	char tracefs[64];		/* where uprobe_events is */
	char group[32];			/* jmptrace_PID */
	pid_t keeper;			/* the child the anchors are opened on */
	uint32_t stack_copy;		/* bytes of stack a site copies (--stack-copy, else UPROBES_STACK_DEFAULT) */
	int stack_whole;		/* no --stack-copy: the BPF path copies each thread's whole stack (uprobes_bpf_top) */
	uint64_t ring_bytes;
	uint64_t ring_total;		/* what the rings of all threads may take (--buffer-total) */
	uint64_t ring_used;		/* what they take now: atomic (a stand-in opens rings without the lock) */
	struct up_def **defs;
	size_t ndefs;
	/* id of each event -> its site, open addressing */
	uint64_t *ids;
	struct jt_usite **id_site;
	size_t id_mask, id_count;
	struct jt_usite **sites;	/* every site ever made: samples may name them until the end */
	size_t nsites;
	struct jt_unwind_ctx *ctx;	/* unwinds under the tracer lock: one at a time */
	/* The BPF path (uprobes_bpf.c), NULL on the perf path: every site but the hooks is in its links. */
	struct up_bpf *bpf;
	struct up_link *links;		/* every process's links, closed at its exec and at the end */
	size_t nlinks;
	uint64_t lost, samples;
	uint64_t joined;		/* of the samples, joined calls' records: an entry and a return each (-v) */
	uint64_t stack_bytes;		/* of stack the samples carried (the BPF path's; -v says it per sample) */
	uint64_t reader_cpu_ns;		/* the reader thread's CPU time, taken as it ends */
	int draining;			/* in up_ring_merge, where the lock cannot be let go (uprobes_open_pending asserts) */
	pthread_t reader;
	int reader_running;
	volatile int quit;
	int wake;			/* eventfd: a ring was added, poll it now (up_reader) */
	/* What ended threads leave to close, and the thread that closes it (up_closer). */
	pthread_mutex_t graves_lock;
	pthread_cond_t graves_cond;
	struct up_grave *graves;
	pthread_t closer;
	int closer_running, closer_quit;
};

/* One uprobe_multi link of the BPF path: some sites of one file, entries or returns, for one process. */
struct up_link {
	pid_t pid;
	int fd;
};

/* An ended thread's event descriptors and ring, or links, waiting for up_closer (uprobes_reader.c). */
struct up_grave {
	int *fds;
	int nfds;
	struct up_ring *ring;
	int together;		/* the BPF path's links: closed together with every other such (uprobes_grave_close) */
	struct up_grave *next;
};

/* Closes every definition's anchor and removes the definitions from tracefs, at the end, never in the background (uprobes_sites.c). */
void uprobes_defs_release(struct jt_uprobes *u);

/* Events the kernel dropped on t's perf events so far (uprobes_perf.c). */
uint64_t uprobes_thread_lost(const struct jt_thread *t);

/*
 * Takes t's events and ring off it and closes them: by the closer when
 * later suits, at once otherwise or without u (uprobes_perf.c).
 */
void uprobes_thread_close(struct jt_uprobes *u, struct jt_thread *t, int later);

/* Closes g's descriptors and ring and frees it (uprobes_reader.c). */
void uprobes_grave_close(struct up_grave *g);

/* Hands g to the closer thread, or closes it at once without one (uprobes_reader.c). */
void uprobes_bury(struct jt_uprobes *u, struct up_grave *g);

/* A ring was added (tracer lock held): the reader polls it from now on, not after its current wait (uprobes_reader.c). */
void uprobes_wake_reader(struct jt_uprobes *u);

/* Applies one sample, counted among the tracer's events when it was one: both paths' readers. */
void uprobes_apply(struct jt_uprobes *u, const struct jt_usample *s);

/* Ends the reader thread and then the closer, each only if it runs (uprobes_reader.c). */
void uprobes_stop(struct jt_uprobes *u);

/*
 * Chooses the event path at the session's start: the BPF path where the
 * kernel loads the program and makes its links, else the perf path; -v
 * says which and why. Returns 0 (either path), never failing the session.
 */
int uprobes_bpf_choose(struct jt_uprobes *u, uint64_t ring_bytes);

/* Links the pending sites of p that have no perf definition (every one but the hooks); err[j] gets what the kernel refused for sites[j]. */
void uprobes_bpf_link(struct jt_uprobes *u, struct jt_proc *p, struct jt_usite **sites, size_t n, int *err);

/* p's image ended (exec) or the session detaches: closes p's links (pid 0: everybody's), by the closer thread when later. */
void uprobes_bpf_unlink(struct jt_uprobes *u, pid_t pid, int later);

/*
 * t's SIGTRAP stop, of si_code code, on the BPF path: the fn of the hook
 * whose record came before it (its SIGTRAP is ours), else -1.
 */
int uprobes_bpf_hook_of(struct jt_thread *t, int code);

/*
 * The BPF path, without --stack-copy: gives the program t's stack top, so
 * that its hits copy every frame up to main or the thread's start and no
 * more. fresh: t is at its first stop, its stack pointer at the top of a
 * stack it has not used yet. Else the top is the process's start of stack
 * (main's, or a fork child's of it) when the stack pointer is below it and
 * near, or the end of the mapping that holds the stack pointer (maps: the
 * process's mappings, read at the first need and kept for the caller's
 * next thread; NULL when fresh). A thread that is not stopped, or has one
 * already, is left alone.
 */
void uprobes_bpf_top(struct jt_uprobes *u, struct jt_thread *t, int fresh, struct jt_maps *maps);

/*
 * t ended (ended: the free it deferred last is applied first), or exec'd
 * onto a new stack (its image's events were applied at the exec:
 * uprobes_settle): the program forgets its top.
 */
void uprobes_bpf_top_drop(struct jt_uprobes *u, struct jt_thread *t, int ended);

/* Applies every record of the ring (tracer lock held). */
void uprobes_bpf_drain(struct jt_uprobes *u);

/*
 * uprobes_settle's BPF part: a drain, then the free each thread deferred
 * before it (up_bpf_pending), which its next record would have brought.
 */
void uprobes_bpf_settle(struct jt_uprobes *u, const struct jt_thread *held);

/* Unloads the program (every link closed before). */
void uprobes_bpf_free(struct jt_uprobes *u);

#endif
