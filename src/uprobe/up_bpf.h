/* up_bpf.h - the uprobe source's BPF path: one program in uprobe_multi links per traced process, one ring for the session. */
#ifndef JT_UP_BPF_H
#define JT_UP_BPF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct up_bpf;

/* One record, as the program wrote it: a hit of site by thread tid. Valid during the call it is given to. */
struct up_bpf_event {
	uint32_t site;			/* the index the site's cookie carries (up_bpf_cookie) */
	pid_t pid, tid;
	uint64_t time;			/* CLOCK_MONOTONIC (UTIL_CLOCK), ns */
	const uint64_t *regs;		/* nregs values in perf's order of the site's mask */
	size_t nregs;
	const uint8_t *stack;		/* stack_len bytes from the stack pointer, NULL when none */
	size_t stack_len;
	/*
	 * A joined call's return, site's (up_bpf_cookie's join), that stands
	 * for its entry too: regs are all the entry's (ARCH_PERF_REGS_MASK's)
	 * but the instruction pointer, which is the return address, and ax,
	 * the value returned; the stack is the entry's, from its stack pointer.
	 */
	int joined;
	/*
	 * Not 0: a free deferred (up_bpf_abi.h's struct up_bpf_pf), its number
	 * among its thread's; it may come twice, from a record and from
	 * up_bpf_pending: the reader applies each number once.
	 */
	uint64_t pf_seq;
};

typedef void (*up_bpf_fn)(void *arg, const struct up_bpf_event *ev);

/*
 * Loads the BPF program built into jmptrace with a ring of ring_bytes (a
 * power of two of pages), each record handed to fn(arg) by up_bpf_drain,
 * and proves that this kernel makes uprobe_multi links (without making one:
 * a link that the kernel refuses only for its pid). Returns NULL with why
 * (what failed, for -v) written into why[size].
 */
struct up_bpf *up_bpf_open(uint64_t ring_bytes, up_bpf_fn fn, void *arg, char *why, size_t size);

/* Unloads the program and frees its ring (every link closed before, or not: they hold the program). NULL is a no-op. */
void up_bpf_close(struct up_bpf *b);

/* How many sites a session may have: a cookie carries the index in 24 bits. */
#define UP_BPF_SITES_MAX (1U << 24)

/*
 * The cookie of a site: index site (below UP_BPF_SITES_MAX) for the reader, the
 * registers of regs_mask (one of perf_regs.h's three masks), stack bytes
 * of stack; a hook's hit also sends its thread a SIGTRAP. join: the entry
 * and the return of a call that calls no other probed function, which
 * make one record between them where the thread's stack top is known
 * (up_bpf_set_top; up_bpf_abi.h says how). defer: a free whose record
 * waits for its thread's next (up_bpf_abi.h's struct up_bpf_pf).
 */
uint64_t up_bpf_cookie(uint32_t site, uint64_t regs_mask, uint32_t stack, int hook, int join, int defer);

/*
 * A link of the program on n offsets of file path, return probes when ret,
 * for process pid alone (threads made later included). Returns its
 * descriptor (closing it takes the probes out: a grace period), or -1 with
 * errno set.
 */
int up_bpf_link(struct up_bpf *b, pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		size_t n, int ret);

/* A descriptor that polls readable when the ring has records to read. */
int up_bpf_poll_fd(const struct up_bpf *b);

/*
 * Hands every record the ring holds to the open's fn, in the ring's order
 * (one order for all threads), after those the stash holds.
 */
void up_bpf_drain(struct up_bpf *b);

/*
 * Copies the records the ring holds into the stash, to be applied by the
 * next drain, once the ring is half full and unless the stash is full (16
 * rings' worth, 512 MiB at least): for the reader, while the records
 * cannot be applied (the tracer lock is held for long: a snapshot being
 * written), so that the ring never fills meanwhile. Safe beside a drain
 * in another thread.
 */
void up_bpf_stash(struct up_bpf *b);

/* The bytes the stash took in all, for -v. */
uint64_t up_bpf_stashed(struct up_bpf *b);

/*
 * Thread tid's stack top: the address above its outermost frame. Its hits
 * at a site that copies stack copy from the stack pointer up to there (at
 * most UP_BPF_STACK_MAX bytes, the innermost), whatever the site's cookie
 * says. Returns 0, or -1 with errno set (E2BIG: UP_BPF_TOPS_MAX threads
 * have one; that thread copies what its sites say).
 */
int up_bpf_set_top(struct up_bpf *b, pid_t tid, uint64_t top);

/*
 * Hands the free that thread tid of process pid deferred, if it made it
 * by before (CLOCK_MONOTONIC ns), to the open's fn as its record would, and
 * returns 1; else 0. Every record of the thread's from before its free
 * must be applied by then: for a thread that has ended or is stopped, once
 * a drain was whole (up_bpf_drained_at); for a running one, a free made
 * before the time that gives (uprobes_bpf_settle takes a margin off). The
 * caller holds what a drain's caller holds.
 */
int up_bpf_pending(struct up_bpf *b, pid_t pid, pid_t tid, uint64_t before);

/*
 * The time before which every record made was applied by the last drain,
 * or 0 when it stopped short (a writer kept off the CPU, a stash left).
 */
uint64_t up_bpf_drained_at(struct up_bpf *b);

/* Deferred frees the ring's records carried so far, for -v. */
uint64_t up_bpf_deferred(const struct up_bpf *b);

/* Forgets tid's stack top (it exited, or exec'd onto a new stack). */
void up_bpf_drop_top(struct up_bpf *b, pid_t tid);

/* Records the full ring refused so far. */
uint64_t up_bpf_lost(const struct up_bpf *b);

#endif
