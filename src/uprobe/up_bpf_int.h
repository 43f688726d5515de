/* up_bpf_int.h - private to up_bpf.c and up_bpf_ring.c: the session's state, and the kernel ABI of uprobe_multi links (Linux 6.6), which Debian 12's linux-libc-dev (6.1) lacks. */
#ifndef JT_UP_BPF_INT_H
#define JT_UP_BPF_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "up_bpf.h"

struct bpf_object;
struct ring_buffer;
struct up_stash;

struct up_bpf {
	struct bpf_object *obj;
	int prog_fd;
	int lost_fd;
	int tops_fd;
	struct ring_buffer *rb;
	/* The ring's consumer and producer positions, read-only: the bound of a drain (up_bpf_drain). */
	const volatile unsigned long *pos;
	size_t pos_len;
	uint64_t budget, taken;	/* a drain's bytes to take, and those taken */
	up_bpf_fn fn;
	void *arg;
	/*
	 * The ring has one consumer at a time: a drain, which applies, or a
	 * stash, which copies the records out to apply later (up_bpf_stash).
	 * The stash's records are older than the ring's: a drain applies
	 * them first.
	 */
	pthread_mutex_t consume;
	int stashing;			/* the record callback copies instead of applying */
	struct up_stash *stash, *stash_tail;
	uint64_t stash_bytes;		/* held in the stash now */
	uint64_t stash_max;		/* past it, records stay in the ring (which may fill) */
	uint64_t stashed;		/* taken into it in all (-v) */
	uint64_t dropped;		/* records lost for want of memory for them (up_bpf_keep) */
	uint64_t ring_bytes;		/* the ring's size: records move out only once it is half full */
	uint64_t deferred;		/* deferred frees the records carried (-v) */
	uint64_t drained_at;		/* up_bpf_drained_at */
	/*
	 * Emptied pieces kept for the next copies, a ring's worth at most
	 * (up_bpf_spare).
	 */
	struct up_stash *spare;
	uint64_t spare_bytes;
	/*
	 * A drain applies the records written before it began, and only
	 * those: the ring's up to due_end, and the stash's first stash_due
	 * bytes (records moved out of the ring during the drain count when
	 * they lie before due_end; cons_at is where the current consume
	 * began, so that a record's place in the ring is cons_at + taken).
	 */
	int draining;
	unsigned long due_end, cons_at;
	uint64_t stash_due;
};

/*
 * What the stash may hold: 16 rings' worth, and 512 MiB at least (8
 * threads allocating as fast as they can on 2 CPUs leave 150 MB under a
 * snapshot of 300 ms). Beyond, the ring fills and drops, counted as lost.
 */
#define UP_STASH_RINGS 16
#define UP_STASH_MIN ((uint64_t)512 << 20)

/* libbpf's ring callback (up_bpf_ring.c): applies a record, or stashes it (up_bpf_stash). */
int up_bpf_record(void *arg, void *data, size_t size);

/* Frees the stash and its spare pieces (up_bpf_close). */
void up_bpf_stash_free_all(struct up_bpf *b);

/* enum bpf_attach_type: checked against the running kernel's BTF (6.18). */
#define UP_BPF_TRACE_UPROBE_MULTI	48
/* uprobe_multi.flags: the link's probes are return probes. */
#define UP_BPF_F_UPROBE_MULTI_RETURN	1U

/*
 * union bpf_attr as BPF_LINK_CREATE reads it for uprobe_multi: the common
 * head of link_create, then its uprobe_multi member at offset 16
 * (include/uapi/linux/bpf.h of 6.6 on; the union's 8-byte alignment). The
 * kernel takes a shorter attr than its own with the rest read as zero.
 */
struct up_bpf_link_attr {
	__u32 prog_fd;
	__u32 target_fd;		/* 0: the path says what */
	__u32 attach_type;		/* UP_BPF_TRACE_UPROBE_MULTI */
	__u32 flags;			/* link_create.flags: 0 */
	__aligned_u64 path;		/* const char *, the file the offsets are in */
	__aligned_u64 offsets;		/* const __u64[cnt], file offsets */
	__aligned_u64 ref_ctr_offsets;	/* none: 0 */
	__aligned_u64 cookies;		/* const __u64[cnt], bpf_get_attach_cookie's */
	__u32 cnt;
	__u32 multi_flags;		/* UP_BPF_F_UPROBE_MULTI_RETURN */
	__u32 pid;			/* only this process's threads run the program */
	__u32 pad;
};

_Static_assert(__builtin_offsetof(struct up_bpf_link_attr, path) == 16, "uprobe_multi.path at 16");
_Static_assert(__builtin_offsetof(struct up_bpf_link_attr, pid) == 56, "uprobe_multi.pid at 56");

#endif
