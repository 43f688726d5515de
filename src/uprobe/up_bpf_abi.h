/* up_bpf_abi.h - what the uprobe source's BPF program and jmptrace share: the cookie of a site and the record layout. */
#ifndef JT_UP_BPF_ABI_H
#define JT_UP_BPF_ABI_H

#include <linux/types.h>

/*
 * A link's cookie per site tells the program all it needs, so that a hit
 * looks nothing up: which site (an index into the session's sites, for the
 * reader), which registers to copy, and how many bytes of stack.
 */
#define UP_BPF_SITE_BITS	24
#define UP_BPF_SITE_MASK	((1ULL << UP_BPF_SITE_BITS) - 1)
#define UP_BPF_KIND_SHIFT	24		/* 2 bits: enum up_bpf_kind */
#define UP_BPF_JOIN		(1ULL << 26)	/* a joined call's site: its entry and its return (up_bpf_top) */
#define UP_BPF_JOINED		(1ULL << 27)	/* in a record's cookie: the call's entry and return in one */
#define UP_BPF_DEFER		(1ULL << 28)	/* a free whose record waits for its thread's next (struct up_bpf_pf) */
#define UP_BPF_PF		(1ULL << 29)	/* in a record's cookie: a deferred free at its end, which comes first */
#define UP_BPF_PF_ONLY		(1ULL << 30)	/* in a record's cookie: nothing but that deferred free */
#define UP_BPF_STACK_SHIFT	32		/* the low 32 bits above: bytes of stack */

/* The registers a record carries, in perf's order (perf_regs.h's masks). */
enum up_bpf_kind {
	UP_BPF_REGS_FULL = 0,	/* ARCH_PERF_REGS_MASK: an allocator's entry */
	UP_BPF_REGS_RET = 1,	/* ARCH_PERF_REGS_RET_MASK: a return */
	UP_BPF_REGS_FREE = 2,	/* ARCH_PERF_REGS_FREE_MASK: a free's entry */
	UP_BPF_HOOK = 3,	/* ARCH_PERF_REGS_MASK, then a SIGTRAP to the thread: a hook (uprobes.h) */
};

/* Room for the most registers a kind carries (ARCH_PERF_REGS_N). */
#define UP_BPF_NREGS		18

/* The largest stack copy (--stack-copy takes at most 65528 bytes). */
#define UP_BPF_STACK_MAX	65536

/*
 * One record in the ring: a hit of one site by one thread. The stack
 * starts at regs[UP_BPF_NREGS], whatever the kind, and holds stack_len
 * bytes from the stack pointer: fewer than asked where the stack ends.
 */
struct up_bpf_rec {
	__u64 cookie;
	__u64 time;		/* bpf_ktime_get_ns: CLOCK_MONOTONIC, UTIL_CLOCK */
	__u32 pid, tid;
	__u32 nregs;		/* values in regs, in perf's order of the kind's mask */
	__u32 stack_len;
	__u64 regs[UP_BPF_NREGS];
};

/* Room for a deferred free's registers (ARCH_PERF_REGS_FREE_MASK's) and stack (uprobes.h's UPROBES_FREE_COPY). */
#define UP_BPF_PF_NREGS		6
#define UP_BPF_PF_STACK		512

/*
 * A free deferred (a site marked UP_BPF_DEFER: the C library's free): its
 * record as the thread's entry in the "tops" map keeps it, until the
 * thread's next record carries it at its end (UP_BPF_PF) or, where that
 * record cannot (a free when one is pending, a record of no joined call),
 * a record of its own before (UP_BPF_PF_ONLY). One reservation a malloc
 * and free pair where there were two: the ring's lock is what 8 threads
 * on 2 CPUs wait for (doc/performance.md). Its thread's order is kept;
 * another thread's malloc of the same block may come before it in the
 * ring, which the reader tells by the times (uevent.c). jmptrace reads a
 * pending one itself where it must not wait (a snapshot, a thread's end),
 * as a copy taken twice and equal with an even ver: the program makes ver
 * odd while it writes. seq numbers a thread's deferred frees from 1, so
 * that the reader applies each once; cookie 0: none pending.
 */
struct up_bpf_pf {
	__u64 ver;
	__u64 seq;
	__u64 cookie;		/* the free site's (UP_BPF_REGS_FREE) */
	__u64 time;		/* bpf_ktime_get_ns at the free */
	__u32 nregs;
	__u32 stack_len;
	__u64 regs[UP_BPF_PF_NREGS];
	__u8 stack[UP_BPF_PF_STACK];
};

/*
 * How far below its thread's top a stack pointer is taken to be on that
 * thread's stack (a stack deeper than UP_BPF_STACK_MAX copies its innermost
 * part), glibc's default stack size; farther, it is on another stack.
 */
#define UP_BPF_STACK_SPAN	(8ULL << 20)

/*
 * A thread's entry in the "tops" map. A joined call (a site marked
 * UP_BPF_JOIN: malloc of the C library, which calls no other probed
 * function) writes no record at its entry, only its stack pointer and
 * first argument here, and one record at its return: the return's
 * registers (those a call keeps are the entry's; the first argument put
 * back), its stack copied from the entry's stack pointer with the word
 * that was there at the entry in its first: the return address, or the
 * kernel's trampoline where an outer probed call had tail-called it. One record where there were two, on the
 * ring that every CPU reserves in. pend_sp is 0 when no call is pending.
 */
struct up_bpf_top {
	__u64 top;
	__u64 pend_sp;
	__u64 pend_arg;
	__u64 pend_slot;	/* the word at pend_sp then: the return address, or an outer call's trampoline (a tail call) */
	struct up_bpf_pf pf;	/* a free deferred, if its cookie is not 0 */
};

/* Threads whose stack top the "tops" map holds at once: past that, a new thread copies what its sites say. */
#define UP_BPF_TOPS_MAX		65536

/* Index of the one element of the "lost" array map: reserves the ring refused. */
#define UP_BPF_LOST_KEY		0

#endif
