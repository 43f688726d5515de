/* uprobe.bpf.c - the uprobe source's kernel side: a hit copies its registers and the top of its thread's stack into the session's one ring. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf_regs.h"
#include "up_bpf_abi.h"

/* bpf_probe_read_user and bpf_send_signal_thread are GPL-only helpers; jmptrace's MIT licence is compatible. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define UP_PAGE 4096ULL

/* Every thread of every traced process writes here, in one order; jmptrace sets the size before the load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 25);
} ring SEC(".maps");

/* Hits whose record the full ring refused: the reports' lost events. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/*
 * Copies up to want bytes of stack from sp into dst (room for cap), and
 * returns how many. A read of a fixed size fails whole when the stack ends
 * sooner (a thread near the top of its stack, main's frame): then the
 * first page past sp that cannot be read is where the copy ends.
 */
static __always_inline __u64
up_copy_stack(__u8 *dst, __u64 sp, __u64 want, const __u64 cap)
{
	__u64 n = want < cap ? want : cap, end = 0;

	if (n == 0)
		return 0;
	if (bpf_probe_read_user(dst, n, (const void *)sp) == 0)
		return n;
	for (__u64 k = 1; k <= cap / UP_PAGE + 1; k++) {
		__u64 page = (sp & ~(UP_PAGE - 1)) + k * UP_PAGE;
		char c;

		if (page >= sp + n)
			break;
		if (bpf_probe_read_user(&c, 1, (const void *)page) != 0) {
			end = page;
			break;
		}
	}
	if (!end)
		return 0;
	n = end - sp;
	if (n > cap)
		n = cap;
	if (n == 0 || bpf_probe_read_user(dst, n, (const void *)sp) != 0)
		return 0;
	return n;
}

/*
 * The registers of the kind the cookie names, in perf's order (bpf_regs.h).
 * The context is read once, whole, at constant offsets: the verifier takes
 * no context pointer moved by an offset, which clang makes of loads that
 * the kinds share.
 */
#define UP_REG_LOAD(off) v[(off) / 8] = *(volatile const __u64 *)((const char *)ctx + (off));
#define UP_REG(off) r->regs[i++] = v[(off) / 8];

static __always_inline void
up_regs(struct up_bpf_rec *r, const void *ctx, __u64 cookie)
{
	__u64 v[ARCH_BPF_PT_REGS_SIZE / 8];
	__u32 i = 0;

	ARCH_BPF_REGS_FULL(UP_REG_LOAD)
	switch ((cookie >> UP_BPF_KIND_SHIFT) & 3) {
	case UP_BPF_REGS_RET:
		ARCH_BPF_REGS_RET(UP_REG)
		break;
	case UP_BPF_REGS_FREE:
		ARCH_BPF_REGS_FREE(UP_REG)
		break;
	default:
		ARCH_BPF_REGS_FULL(UP_REG)
		break;
	}
	r->nregs = i;
}

/*
 * One record of sizeof(rec) + cap bytes (a constant, as the verifier wants
 * it for a reservation). The reader is woken once the ring is an eighth
 * full, not at every record: it polls every 20 ms anyway, and every ptrace
 * stop drains the ring first.
 */
static __always_inline int
up_emit(const void *ctx, __u64 cookie, const __u64 cap)
{
	__u64 pt = bpf_get_current_pid_tgid(), avail, size;
	struct up_bpf_rec *r = bpf_ringbuf_reserve(&ring, sizeof(*r) + cap, 0);
	__u32 key = UP_BPF_LOST_KEY;

	if (!r) {
		__u64 *n = bpf_map_lookup_elem(&lost, &key);

		if (n)
			__sync_fetch_and_add(n, 1);
		return 0;
	}
	r->cookie = cookie;
	r->time = bpf_ktime_get_ns();
	r->pid = (__u32)(pt >> 32);
	r->tid = (__u32)pt;
	up_regs(r, ctx, cookie);
	r->stack_len = (__u32)up_copy_stack((__u8 *)(r + 1), *(const __u64 *)((const char *)ctx + ARCH_BPF_SP),
					    cookie >> UP_BPF_STACK_SHIFT, cap);
	avail = bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA);
	size = bpf_ringbuf_query(&ring, BPF_RB_RING_SIZE);
	bpf_ringbuf_submit(r, avail > size / 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	if (((cookie >> UP_BPF_KIND_SHIFT) & 3) == UP_BPF_HOOK)
		bpf_send_signal_thread(5 /* SIGTRAP */);
	return 0;
}

/* One function per size of copy, so that each reservation's size is a constant of its own. */
#define UP_EMIT_CAP(cap) \
	static __attribute__((noinline)) int up_emit_##cap(const void *ctx, __u64 cookie) \
	{ return up_emit(ctx, cookie, cap); }
UP_EMIT_CAP(0)
UP_EMIT_CAP(512)
UP_EMIT_CAP(1024)
UP_EMIT_CAP(2048)
UP_EMIT_CAP(4096)
UP_EMIT_CAP(8192)
UP_EMIT_CAP(16384)
UP_EMIT_CAP(32768)
UP_EMIT_CAP(65536)

/* Every site of every link: the cookie says which, what to copy, and how much. */
SEC("uprobe")
int
up_hit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx), want = cookie >> UP_BPF_STACK_SHIFT;

	if (want == 0)
		return up_emit_0(ctx, cookie);
	if (want <= 512)
		return up_emit_512(ctx, cookie);
	if (want <= 1024)
		return up_emit_1024(ctx, cookie);
	if (want <= 2048)
		return up_emit_2048(ctx, cookie);
	if (want <= 4096)
		return up_emit_4096(ctx, cookie);
	if (want <= 8192)
		return up_emit_8192(ctx, cookie);
	if (want <= 16384)
		return up_emit_16384(ctx, cookie);
	if (want <= 32768)
		return up_emit_32768(ctx, cookie);
	return up_emit_65536(ctx, cookie);
}
