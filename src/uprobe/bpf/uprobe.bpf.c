/* uprobe.bpf.c - the uprobe source's kernel side: a hit copies its registers and the top of its thread's stack into the session's one ring. */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf_regs.h"
#include "up_bpf_abi.h"

/* bpf_probe_read_user and bpf_send_signal_thread are GPL-only helpers; jmptrace's MIT licence is compatible. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";

#define UP_PAGE 4096ULL
/* The piece a stack with holes is read in: a divisor of the page, so that no piece spans two. */
#define UP_PIECE 512ULL

/* Every thread of every traced process writes here, in one order; jmptrace sets the size before the load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 25);
} ring SEC(".maps");

/*
 * Each traced thread's stack top, as jmptrace found it (up_bpf.h's
 * up_bpf_set_top): the address above its outermost frame; and its joined
 * call pending, if any (up_bpf_abi.h's struct up_bpf_top). A hit whose
 * site copies stack copies from the stack pointer to there, so that every
 * frame up to main or the thread's start is in the record, and no more.
 * A thread without one, or a stack pointer not in the UP_BPF_STACK_SPAN
 * below it (another stack: a signal stack, a coroutine's), copies what the
 * site's cookie says.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, UP_BPF_TOPS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct up_bpf_top);
} tops SEC(".maps");

/* Hits whose record the full ring refused: the reports' lost events. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/*
 * A stack up to its thread's top (want is top - sp, below cap - UP_PIECE)
 * whose read failed: it has pages that are not there, the untouched middle
 * of a big local (a read cannot fault them in). Its frames' return
 * addresses and saved registers are on pages that are: read in pieces that
 * never span two pages, a missing one left zero (a failed read zeroes its
 * destination). Returns want.
 */
static __always_inline __u64
up_copy_holes(__u8 *dst, __u64 sp, __u64 want, const __u64 cap)
{
	__u64 head = UP_PIECE - (sp & (UP_PIECE - 1));

	if (head > want)
		head = want;
	if (head > UP_PIECE)
		return 0;
	bpf_probe_read_user(dst, head, (const void *)sp);
#pragma clang loop unroll(disable)
	for (__u64 k = 0; k < cap / UP_PIECE; k++) {
		__u64 off = head + k * UP_PIECE;

		if (off >= want || off > cap - UP_PIECE)
			break;
		bpf_probe_read_user(dst + off, UP_PIECE, (const void *)(sp + off));
	}
	return want;
}

/*
 * Copies up to want bytes of stack from sp into dst (room for cap), and
 * returns how many. A read of a fixed size fails whole when the stack ends
 * sooner (a thread near the top of its stack, main's frame): then the
 * first page past sp that cannot be read is where the copy ends. A copy up
 * to the thread's known top (whole) cannot run past its stack: a failure
 * there is a hole (up_copy_holes).
 */
static __always_inline __u64
up_copy_stack(__u8 *dst, __u64 sp, __u64 want, const __u64 cap, int whole)
{
	__u64 n = want < cap ? want : cap, end = 0;

	if (n == 0)
		return 0;
	if (bpf_probe_read_user(dst, n, (const void *)sp) == 0)
		return n;
	if (whole && cap >= UP_PIECE)
		return up_copy_holes(dst, sp, n, cap);
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

/* What a hit records: its cookie, where its stack copy starts and how much; a joined call's first argument and slot word. */
struct up_hit {
	__u64 cookie;
	__u64 sp;
	__u64 want;
	__u64 arg;
	__u64 slot;
	int whole;
};

/* Takes the free pending in top out of it; ver odd meanwhile, for jmptrace's own reading of it (up_bpf_abi.h). */
static __always_inline void
up_pf_clear(struct up_bpf_top *top)
{
	top->pf.ver++;
	asm volatile("" ::: "memory");
	top->pf.cookie = 0;
	asm volatile("" ::: "memory");
	top->pf.ver++;
}

/* Writes the free pending in top into dst (the end of a record), which carries it from now on. */
static __always_inline void
up_pf_carry(void *dst, struct up_bpf_top *top)
{
	bpf_probe_read_kernel(dst, sizeof(top->pf), &top->pf);
	up_pf_clear(top);
}

/* Counts a hit whose record the full ring refused. */
static __always_inline void
up_lost(void)
{
	__u32 key = UP_BPF_LOST_KEY;
	__u64 *n = bpf_map_lookup_elem(&lost, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* Wakes the reader once the ring is an eighth full, not at every record: it polls every 20 ms anyway. */
static __always_inline __u64
up_wake(void)
{
	__u64 avail = bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA);
	__u64 size = bpf_ringbuf_query(&ring, BPF_RB_RING_SIZE);

	return avail > size / 8 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

/*
 * One record of sizeof(rec) + cap bytes (a constant, as the verifier wants
 * it for a reservation), and the free pending in top after them when pf
 * (UP_BPF_PF). Every ptrace stop drains the ring first. A joined call's
 * record is its return's, made to read as its entry too (up_bpf_abi.h):
 * the first argument and the entry's stack pointer in the registers, the
 * word its return address slot held at the entry in the copy's first word
 * (the return went through the kernel's trampoline since: the slot holds
 * that now).
 */
static __always_inline int
up_emit(const void *ctx, const struct up_hit *h, struct up_bpf_top *top, const __u64 cap, const int pf)
{
	__u64 pt = bpf_get_current_pid_tgid(), cookie = h->cookie;
	struct up_bpf_rec *r = bpf_ringbuf_reserve(&ring, sizeof(*r) + cap + (pf ? sizeof(struct up_bpf_pf) : 0), 0);

	if (!r) {
		up_lost();
		return 0;
	}
	r->time = bpf_ktime_get_ns();
	r->pid = (__u32)(pt >> 32);
	r->tid = (__u32)pt;
	up_regs(r, ctx, cookie);
	r->stack_len = (__u32)up_copy_stack((__u8 *)(r + 1), h->sp, h->want, cap, h->whole);
	if (cookie & UP_BPF_JOINED) {
		r->regs[ARCH_BPF_FULL_ARG0] = h->arg;
		r->regs[ARCH_BPF_FULL_SP] = h->sp;
		if (cap >= 8 && r->stack_len >= 8)
			*(__u64 *)(r + 1) = h->slot;
	}
	if (pf && top) {
		up_pf_carry((__u8 *)(r + 1) + cap, top);
		cookie |= UP_BPF_PF;
	}
	r->cookie = cookie;
	bpf_ringbuf_submit(r, up_wake());
	if (((cookie >> UP_BPF_KIND_SHIFT) & 3) == UP_BPF_HOOK)
		bpf_send_signal_thread(5 /* SIGTRAP */);
	return 0;
}

/*
 * The free pending in top as a record of its own (UP_BPF_PF_ONLY): before
 * another free is deferred, or a record that cannot carry it.
 */
static __noinline int
up_emit_pf_only(struct up_bpf_top *top)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct up_bpf_rec *r;

	if (!top)
		return 0;
	r = bpf_ringbuf_reserve(&ring, sizeof(*r) + sizeof(struct up_bpf_pf), 0);
	if (!r) {
		up_lost();
		up_pf_clear(top);
		return 0;
	}
	__builtin_memset(r, 0, sizeof(*r));
	r->cookie = UP_BPF_PF | UP_BPF_PF_ONLY;
	r->pid = (__u32)(pt >> 32);
	r->tid = (__u32)pt;
	up_pf_carry(r + 1, top);
	bpf_ringbuf_submit(r, up_wake());
	return 0;
}

/*
 * One function per size of copy, so that each reservation's size is a
 * constant of its own, and one more per size for a record that carries a
 * deferred free. Global functions: the verifier checks each once, for any
 * hit, instead of once for every state a caller reaches it in (three
 * times the instructions, 16 ms of every start).
 */
#define UP_EMIT_CAP(cap) \
	__attribute__((noinline)) int up_emit_##cap(bpf_user_pt_regs_t *ctx, const struct up_hit *h) \
	{ return h ? up_emit(ctx, h, NULL, cap, 0) : 0; } \
	__attribute__((noinline)) int up_emit_pf_##cap(bpf_user_pt_regs_t *ctx, const struct up_hit *h, \
						      struct up_bpf_top *top) \
	{ return h && top ? up_emit(ctx, h, top, cap, 1) : 0; }
UP_EMIT_CAP(0)
UP_EMIT_CAP(512)
UP_EMIT_CAP(1024)
UP_EMIT_CAP(2048)
UP_EMIT_CAP(4096)
UP_EMIT_CAP(8192)
UP_EMIT_CAP(16384)
UP_EMIT_CAP(32768)
UP_EMIT_CAP(65536)

/*
 * The room for want bytes: a whole stack may be read in pieces
 * (up_copy_holes), which end UP_PIECE short of the room.
 */
#define UP_FITS(want, whole, cap) ((want) + ((whole) ? UP_PIECE : 0) <= (cap))

/* Whether a stack pointer sp is on the stack below top near enough to copy all of it. */
static __always_inline int
up_whole(const struct up_bpf_top *top, __u64 sp)
{
	return top->top > sp && top->top - sp <= UP_BPF_STACK_MAX - UP_PIECE;
}

/*
 * What a hit on the stack below its thread's top copies: all of it up to
 * the top, or, deeper than the most we copy, its innermost part. A stack
 * pointer farther below is on another stack: the site's cookie says.
 */
static __always_inline void
up_want(const struct up_bpf_top *top, struct up_hit *h)
{
	if (up_whole(top, h->sp)) {
		h->want = (top->top - h->sp + 7) & ~7ULL;
		h->whole = 1;
	} else if (top->top > h->sp && top->top - h->sp < UP_BPF_STACK_SPAN) {
		h->want = UP_BPF_STACK_MAX;
	}
}

/*
 * A joined site's hit (up_bpf_abi.h). Its entry: pending, no record, when
 * its whole stack can be copied at the return and no other call of the
 * thread is pending (one that is, above, is interrupted by a signal
 * handler: this call is recorded as any other); a pending call whose frame
 * is gone (at or below sp) never returned, and is forgotten. Its return:
 * the pending call's when it leaves from that call's frame, made into
 * the record of both; else a return as any other. Returns 1 when the hit
 * records nothing.
 */
static __always_inline int
up_join(const void *ctx, struct up_bpf_top *top, struct up_hit *h)
{
	if (((h->cookie >> UP_BPF_KIND_SHIFT) & 3) == UP_BPF_REGS_RET) {
		if (top->pend_sp == 0 || top->pend_sp + ARCH_BPF_RET_POP != h->sp)
			return 0;
		h->sp = top->pend_sp;
		h->arg = top->pend_arg;
		h->slot = top->pend_slot;
		top->pend_sp = 0;
		h->cookie = (h->cookie & ~(3ULL << UP_BPF_KIND_SHIFT)) |
			    (__u64)UP_BPF_REGS_FULL << UP_BPF_KIND_SHIFT | UP_BPF_JOINED;
		up_want(top, h);	/* whole: it was at the entry, from the same stack pointer */
		return 0;
	}
	if (top->pend_sp && top->pend_sp <= h->sp)
		top->pend_sp = 0;
	if (top->pend_sp || !up_whole(top, h->sp) ||
	    bpf_probe_read_user(&top->pend_slot, sizeof(top->pend_slot), (const void *)h->sp) != 0)
		return 0;
	top->pend_arg = *(volatile const __u64 *)((const char *)ctx + ARCH_BPF_ARG0);
	top->pend_sp = h->sp;
	return 1;
}

/*
 * A deferred free's hit (UP_BPF_DEFER): its record kept in top, after the
 * one pending there goes to the ring. Its stack copy is the site's, at
 * most UP_BPF_PF_STACK bytes: a free's frames nearest (uprobes_sites.c).
 */
static __always_inline int
up_defer(const void *ctx, struct up_bpf_top *top, const struct up_hit *h)
{
	__u32 i = 0;

	if (top->pf.cookie)
		up_emit_pf_only(top);
	top->pf.ver++;
	asm volatile("" ::: "memory");
	top->pf.seq++;
	top->pf.cookie = h->cookie;
	top->pf.time = bpf_ktime_get_ns();
#define UP_PF_REG(off) if (i < UP_BPF_PF_NREGS) top->pf.regs[i++] = *(volatile const __u64 *)((const char *)ctx + (off));
	ARCH_BPF_REGS_FREE(UP_PF_REG)
#undef UP_PF_REG
	top->pf.nregs = i;
	top->pf.stack_len = (__u32)up_copy_stack(top->pf.stack, h->sp, h->want, UP_BPF_PF_STACK, 0);
	asm volatile("" ::: "memory");
	top->pf.ver++;
	return 0;
}

/* The function for a record of want bytes of stack, with a deferred free at its end (pf) or not. */
#define UP_DISPATCH(fn, ...) do { \
	if (h.want == 0) return fn##0(__VA_ARGS__); \
	if (UP_FITS(h.want, h.whole, 512)) return fn##512(__VA_ARGS__); \
	if (UP_FITS(h.want, h.whole, 1024)) return fn##1024(__VA_ARGS__); \
	if (UP_FITS(h.want, h.whole, 2048)) return fn##2048(__VA_ARGS__); \
	if (UP_FITS(h.want, h.whole, 4096)) return fn##4096(__VA_ARGS__); \
	if (UP_FITS(h.want, h.whole, 8192)) return fn##8192(__VA_ARGS__); \
	if (UP_FITS(h.want, h.whole, 16384)) return fn##16384(__VA_ARGS__); \
	if (UP_FITS(h.want, h.whole, 32768)) return fn##32768(__VA_ARGS__); \
	return fn##65536(__VA_ARGS__); \
} while (0)

/*
 * Every site of every link: the cookie says which, what to copy, and how
 * much; a thread whose top jmptrace gave copies its whole stack instead.
 * A free deferred by the thread goes with its next record: at that
 * record's end when it is a joined call's (the one a malloc and free pair
 * makes), else in one of its own just before.
 */
SEC("uprobe")
int
up_hit(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct up_bpf_top *top = bpf_map_lookup_elem(&tops, &tid);
	struct up_hit h = {
		.cookie = cookie,
		.sp = *(volatile const __u64 *)((const char *)ctx + ARCH_BPF_SP),
		.want = cookie >> UP_BPF_STACK_SHIFT,
	};

	if (!top) {
		UP_DISPATCH(up_emit_, ctx, &h);
	}
	if (cookie & UP_BPF_DEFER)
		return up_defer(ctx, top, &h);
	if ((cookie & UP_BPF_JOIN) && up_join(ctx, top, &h))
		return 0;
	/* Not a free's short copy: it needs only the nearest frames (uprobes_sites.c). */
	if (h.want != 0 && !(h.cookie & UP_BPF_JOINED) && ((cookie >> UP_BPF_KIND_SHIFT) & 3) != UP_BPF_REGS_FREE)
		up_want(top, &h);
	if (top->pf.cookie) {
		if (h.cookie & UP_BPF_JOINED)
			UP_DISPATCH(up_emit_pf_, ctx, &h, top);
		up_emit_pf_only(top);
	}
	UP_DISPATCH(up_emit_, ctx, &h);
}
