/* up_bpf_int.h - private to up_bpf.c: the kernel ABI of uprobe_multi links (Linux 6.6), which Debian 12's linux-libc-dev (6.1) lacks. */
#ifndef JT_UP_BPF_INT_H
#define JT_UP_BPF_INT_H

#include <linux/types.h>

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
