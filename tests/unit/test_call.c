/* test_call.c - call matching (entries, returns, frees, tail calls, signal handlers) on a fake thread and memory map, with no process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arch.h"
#include "bp.h"
#include "call.h"
#include "heap.h"
#include "options.h"
#include "proc.h"
#include "tracer.h"
#include "tap.h"

/* The fake target: one page of stack; every other address is unmapped. */
#define STACK_LO	0x7ffe0000ull
#define STACK_LEN	0x1000
#define SP0		(STACK_LO + 0x800)	/* the stack pointer at an allocator's entry */
#define OUT_SLOT	(STACK_LO + 0xf00)	/* posix_memalign's out pointer */
#define CALLER_RET	0x401234ull		/* where the allocator returns to */
#define MAIN_PC		0x401800ull		/* the fake unwinder's outermost frame */
#define FN_ADDR(fn)	(0x7f0000100000ull + (uint64_t)(fn) * 0x100)

struct fake {
	uint8_t stack[STACK_LEN];
	unsigned writes;		/* write calls that reached the target */
	uint64_t last_read;		/* address of the last read */
	int unwind_n;			/* frames the unwinder finds (0: the default 3) */
	unsigned nov, last_nov;		/* overrides given, and those the last unwind saw */
	uint64_t ov_slot[JT_MAX_CALLS], ov_ret[JT_MAX_CALLS];
	uint64_t last_ov_slot[JT_MAX_CALLS], last_ov_ret[JT_MAX_CALLS];
};

static struct fake fk;
static struct jt_proc proc;
static struct jt_thread thr;
static struct jt_options opt;
static struct jt_bp bps[FN_MAX];	/* the standard functions, then the two named in main */

static int
fake_mapped(uint64_t addr, size_t len)
{
	return addr >= STACK_LO && addr + len <= STACK_LO + STACK_LEN;
}

static int
fake_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = arg;

	f->last_read = addr;
	if (!fake_mapped(addr, len))
		return -1;
	memcpy(buf, f->stack + (addr - STACK_LO), len);
	return 0;
}

static int
fake_write(void *arg, uint64_t addr, const void *buf, size_t len)
{
	struct fake *f = arg;

	if (!fake_mapped(addr, len))
		return -1;
	memcpy(f->stack + (addr - STACK_LO), buf, len);
	f->writes++;
	return 0;
}

static uint64_t
fake_word(uint64_t addr)
{
	uint64_t v = 0;

	fake_read(&fk, addr, &v, sizeof(v));
	return v;
}

static void
fake_set_word(uint64_t addr, uint64_t v)
{
	memcpy(fk.stack + (addr - STACK_LO), &v, sizeof(v));
}

static void
fake_override(void *arg, uint64_t slot, uint64_t ret_addr)
{
	struct fake *f = arg;

	f->ov_slot[f->nov] = slot;
	f->ov_ret[f->nov++] = ret_addr;
}

/* pc, the return address at sp (as overridden), then main; overrides last one unwind. */
static int
fake_unwind(void *arg, const arch_regs *regs, uint64_t *pcs, int max)
{
	struct fake *f = arg;
	int n = f->unwind_n ? f->unwind_n : 3;
	uint64_t ret = fake_word(arch_sp(regs));

	for (unsigned i = 0; i < f->nov; i++)
		if (f->ov_slot[i] == arch_sp(regs))
			ret = f->ov_ret[i];
	memcpy(f->last_ov_slot, f->ov_slot, sizeof(f->ov_slot));
	memcpy(f->last_ov_ret, f->ov_ret, sizeof(f->ov_ret));
	f->last_nov = f->nov;
	f->nov = 0;
	if (n < 0)
		return -1;
	n = n < max ? n : max;
	for (int i = 0; i < n; i++)
		pcs[i] = i == 0 ? arch_pc(regs) : i == 1 ? ret : MAIN_PC + (uint64_t)i;
	return n;
}

static const struct jt_mem_ops fake_mem = { fake_read, fake_write, &fk };
static const struct jt_call_io io = { &fake_mem, fake_unwind, fake_override, &fk };

static void
reset(void)
{
	heap_destroy(proc.heap);
	memset(&fk, 0, sizeof(fk));
	memset(&proc, 0, sizeof(proc));
	memset(&thr, 0, sizeof(thr));
	memset(&opt, 0, sizeof(opt));
	proc.pid = thr.tid = 4242;
	proc.heap = heap_new();
	thr.proc = &proc;
	opt.depth = 8;
	/* The displaced instruction is never emulated here: every hit steps. */
	opt.no_emulate = 1;
	for (int fn = 0; fn < alloc_fn_end(); fn++) {
		memset(&bps[fn], 0, sizeof(bps[fn]));
		bps[fn].addr = FN_ADDR(fn);
		bps[fn].fn = fn;
		bps[fn].inserted = 1;
	}
}

/* Thread arrives at fn's breakpoint with sp and the return address ret at sp; args a0..a2. */
static enum call_action
enter(int fn, uint64_t sp, uint64_t ret, uint64_t a0, uint64_t a1, uint64_t a2)
{
	arch_regs regs;

	memset(&regs, 0, sizeof(regs));
	fake_set_word(sp, ret);
	arch_set_pc(&regs, FN_ADDR(fn));
	arch_set_sp(&regs, sp);
	arch_set_arg(&regs, 0, a0);
	arch_set_arg(&regs, 1, a1);
	arch_set_arg(&regs, 2, a2);
	return call_on_trap_io(&thr, &io, &bps[fn], &regs, &opt);
}

/*
 * The call whose slot is at sp executes its ret with retval: the CPU pops
 * the slot into the pc. Returns the pc the thread goes on with, or 0 when
 * call_on_trap did not take it as a return.
 */
static uint64_t
leave(uint64_t sp, uint64_t retval)
{
	uint64_t pc = fake_word(sp);
	arch_regs regs;
	int fn;

	for (fn = 0; fn < alloc_fn_end() && FN_ADDR(fn) != pc; fn++)
		;
	if (fn == alloc_fn_end())
		return pc;	/* not hijacked: the real return address */
	memset(&regs, 0, sizeof(regs));
	arch_set_pc(&regs, pc);
	arch_set_sp(&regs, arch_sp_after_ret(sp));
	arch_set_retval(&regs, retval);
	if (call_on_trap_io(&thr, &io, &bps[fn], &regs, &opt) != CALL_RESUME)
		return 0;
	return arch_pc(&regs);
}

/* A call of fn for size bytes, entered and returned with addr. */
static void
allocated(int fn, uint64_t size, uint64_t addr)
{
	enter(fn, SP0, CALLER_RET, size, 0, 0);
	leave(SP0, addr);
}

static struct jt_heap_totals
totals(void)
{
	struct jt_heap_totals t;

	heap_totals(proc.heap, &t);
	return t;
}

/* Size of the live block at addr, or -1 when there is none. */
static long long
live_size(uint64_t addr)
{
	uint64_t size;

	return heap_lookup(proc.heap, addr, &size, NULL) == 0 ? (long long)size : -1;
}

static void
test_malloc_pair(void)
{
	const struct jt_stack *st;
	uint32_t sid;

	reset();
	is_u64(enter(FN_MALLOC, SP0, CALLER_RET, 100, 0, 0), CALL_STEP, "malloc entry: steps (no emulation)");
	is_u64(thr.ncalls, 1, "malloc entry: one call in flight");
	is_u64(fake_word(SP0), FN_ADDR(FN_MALLOC), "malloc entry: the slot holds the trampoline");
	is_u64(fk.writes, 1, "malloc entry: one write, made through the ops");
	is_u64(proc.calls[FN_MALLOC], 1, "malloc entry: counted");
	is_u64(totals().live_blocks, 0, "malloc entry: nothing live before the return");
	is_u64(leave(SP0, 0x10000), CALLER_RET, "malloc return: goes on at the real return address");
	is_u64(thr.ncalls, 0, "malloc return: nothing in flight");
	is_u64(live_size(0x10000), 100, "malloc return: a block of 100 bytes");
	is_u64(totals().live_blocks, 1, "malloc return: one live block");
	is_u64(totals().allocs, 1, "malloc return: one allocation");
	ok(heap_lookup(proc.heap, 0x10000, NULL, &sid) == 0 && (st = heap_stack_get(proc.heap, sid)) &&
	   st->depth == 2 && st->pcs[0] == CALLER_RET && st->pcs[1] == MAIN_PC + 2 && !st->truncated,
	   "malloc return: the block's stack is the caller's, without the allocator's frame");

	reset();
	enter(FN_MALLOC, SP0, CALLER_RET, 100, 0, 0);
	is_u64(leave(SP0, 0), CALLER_RET, "malloc returning NULL: real return address");
	is_u64(totals().allocs, 0, "malloc returning NULL: no block");

	/* Without an unwound caller the return address is read at the slot through the ops. */
	reset();
	fk.unwind_n = -1;
	enter(FN_CALLOC, SP0, CALLER_RET, 3, 5, 0);
	is_u64(leave(SP0, 0x10000), CALLER_RET, "calloc, unwind failed: returns to the slot's old word");
	is_u64(live_size(0x10000), 15, "calloc, unwind failed: 3 * 5 bytes");
}

/*
 * A free of no live block whose unwind gives nothing: its caller is read at
 * the entry's slot, so glibc's teardown (own.h) is still told from the
 * program. (Before, such a free counted as a call and an invalid free with
 * an empty stack: frees.t under the sanitizer build, 3 of 115 runs.)
 */
static void
test_free_unwind_failed(void)
{
	struct jt_heap_totals tt;

	reset();
	fk.unwind_n = -1;
	proc.own.fn[0] = (struct jt_own_range){ CALLER_RET - 0x10, CALLER_RET + 0x10 };
	proc.own.nfn = 1;
	enter(FN_FREE, SP0, CALLER_RET, 0x20000, 0, 0);
	tt = totals();
	is_u64(tt.invalid_frees, 0, "free from glibc's teardown, unwind failed: no invalid free");
	is_u64(proc.calls[FN_FREE], 0, "free from glibc's teardown, unwind failed: not the program's call");

	reset();
	fk.unwind_n = 1;
	proc.own.lib[0] = (struct jt_own_range){ CALLER_RET - 0x100, CALLER_RET + 0x100 };
	proc.own.nlib = 1;
	enter(FN_FREE, SP0, CALLER_RET, 0x20000, 0, 0);
	tt = totals();
	is_u64(tt.invalid_frees, 0, "free from inside the shared C library, no caller unwound: no invalid free");
	is_u64(proc.calls[FN_FREE], 0, "free from inside the shared C library, no caller unwound: not the program's call");

	reset();
	fk.unwind_n = -1;
	enter(FN_FREE, SP0, CALLER_RET, 0x20000, 0, 0);
	tt = totals();
	is_u64(tt.invalid_frees, 1, "free from the program, unwind failed: an invalid free");
	is_u64(proc.calls[FN_FREE], 1, "free from the program, unwind failed: its call");
}

static void
test_free(void)
{
	reset();
	allocated(FN_MALLOC, 100, 0x10000);
	fk.writes = 0;
	is_u64(enter(FN_FREE, SP0, CALLER_RET, 0x10000, 0, 0), CALL_STEP, "free: steps");
	is_u64(fake_word(SP0), CALLER_RET, "free: the slot is left alone (no return is awaited)");
	is_u64(fk.writes, 0, "free: nothing written");
	is_u64(thr.ncalls, 0, "free: nothing in flight");
	is_u64(live_size(0x10000), (uint64_t)-1, "free: the block is gone");
	is_u64(totals().frees, 1, "free: one free");
	is_u64(totals().unknown_frees, 0, "free: no unknown free");
	is_u64(proc.calls[FN_FREE], 1, "free: counted");

	/* free(NULL) is a call and nothing else. */
	enter(FN_FREE, SP0 + 64, CALLER_RET, 0, 0, 0);
	is_u64(proc.calls[FN_FREE], 2, "free(NULL): counted");
	is_u64(totals().unknown_frees, 0, "free(NULL): no unknown free");
}

static void
test_realloc(void)
{
	reset();
	allocated(FN_MALLOC, 100, 0x10000);
	enter(FN_REALLOC, SP0, CALLER_RET, 0x10000, 200, 0);
	is_u64(leave(SP0, 0x20000), CALLER_RET, "realloc: real return address");
	is_u64(live_size(0x10000), (uint64_t)-1, "realloc: the old block is gone");
	is_u64(live_size(0x20000), 200, "realloc: the new block has the new size");
	is_u64(totals().live_blocks, 1, "realloc: one live block");
	is_u64(totals().frees, 1, "realloc: the old block counts as freed");
	is_u64(proc.calls[FN_REALLOC], 1, "realloc: counted");

	/* glibc's realloc(p, 0) frees p and returns NULL. */
	enter(FN_REALLOC, SP0, CALLER_RET, 0x20000, 0, 0);
	leave(SP0, 0);
	is_u64(totals().live_blocks, 0, "realloc(p, 0): nothing live");
	is_u64(totals().frees, 2, "realloc(p, 0): a free");
	is_u64(totals().invalid_frees, 0, "realloc(p, 0): no invalid free");

	/* A realloc of no live block is an invalid free made from its stack. */
	enter(FN_REALLOC, SP0, CALLER_RET, 0x20000, 300, 0);
	leave(SP0, 0x30000);
	is_u64(live_size(0x30000), 300, "realloc of a freed block: the new block");
	is_u64(totals().invalid_frees, 1, "realloc of a freed block: an invalid free");
}

static void
test_posix_memalign(void)
{
	reset();
	fake_set_word(OUT_SLOT, 0);
	enter(FN_POSIX_MEMALIGN, SP0, CALLER_RET, OUT_SLOT, 64, 256);
	/* The allocator stores the block, then returns 0. */
	fake_set_word(OUT_SLOT, 0x40000);
	is_u64(leave(SP0, 0), CALLER_RET, "posix_memalign: real return address");
	is_u64(fk.last_read, OUT_SLOT, "posix_memalign: the out pointer is read through the ops");
	is_u64(live_size(0x40000), 256, "posix_memalign: the block it stored, with the size asked");

	/* An error return stores nothing: no block. */
	enter(FN_POSIX_MEMALIGN, SP0, CALLER_RET, OUT_SLOT, 64, 512);
	fake_set_word(OUT_SLOT, 0x50000);
	leave(SP0, 12);
	is_u64(live_size(0x50000), (uint64_t)-1, "posix_memalign failing: no block");

	/* An out pointer the ops cannot read: no block. */
	enter(FN_POSIX_MEMALIGN, SP0, CALLER_RET, 0x1000, 64, 512);
	leave(SP0, 0);
	is_u64(fk.last_read, 0x1000, "posix_memalign, unmapped out pointer: read through the ops");
	is_u64(totals().live_blocks, 1, "posix_memalign, unmapped out pointer: no block");
}

static void
test_tail_and_nested(void)
{
	/* operator new tail-calls malloc: same stack pointer, our slot still live. */
	reset();
	enter(FN_NEW, SP0, CALLER_RET, 48, 0, 0);
	enter(FN_MALLOC, SP0, FN_ADDR(FN_NEW), 48, 0, 0);
	is_u64(thr.ncalls, 1, "tail call: still one call in flight");
	is_u64(proc.calls[FN_MALLOC], 0, "tail call: malloc not counted");
	is_u64(leave(SP0, 0x10000), CALLER_RET, "tail call: returns through new's trampoline");
	is_u64(live_size(0x10000), 48, "tail call: one block of 48");
	is_u64(totals().allocs, 1, "tail call: one allocation");
	is_u64(proc.calls[FN_NEW], 1, "tail call: new counted once");

	/* realloc(p, 0) tail-calling free: the free is inside the realloc. */
	reset();
	allocated(FN_MALLOC, 10, 0x10000);
	enter(FN_REALLOC, SP0, CALLER_RET, 0x10000, 0, 0);
	enter(FN_FREE, SP0, FN_ADDR(FN_REALLOC), 0x10000, 0, 0);
	is_u64(proc.calls[FN_FREE], 0, "free tail-called by realloc: not counted");
	is_u64(live_size(0x10000), 10, "free tail-called by realloc: the block lives until realloc returns");
	leave(SP0, 0);
	is_u64(totals().frees, 1, "free tail-called by realloc: one free, at realloc's return");

	/* calloc calling malloc inside: a lower stack pointer is nested. */
	reset();
	enter(FN_CALLOC, SP0, CALLER_RET, 4, 4, 0);
	enter(FN_MALLOC, SP0 - 64, 0x7f0000200000ull, 16, 0, 0);
	is_u64(thr.ncalls, 1, "nested malloc: not a call of its own");
	is_u64(fake_word(SP0 - 64), 0x7f0000200000ull, "nested malloc: its slot is not hijacked");
	is_u64(leave(SP0, 0x10000), CALLER_RET, "nested malloc: calloc returns");
	is_u64(totals().allocs, 1, "nested malloc: one allocation");

	/* A call abandoned by longjmp: its slot no longer holds the trampoline. */
	reset();
	enter(FN_MALLOC, SP0, CALLER_RET, 10, 0, 0);
	fake_set_word(SP0, 0x401500);
	enter(FN_MALLOC, SP0, CALLER_RET, 20, 0, 0);
	is_u64(thr.ncalls, 1, "stale call at the same sp: replaced");
	is_u64(proc.calls[FN_MALLOC], 2, "stale call at the same sp: both counted");
	leave(SP0, 0x10000);
	is_u64(live_size(0x10000), 20, "stale call at the same sp: the new call's size");
	enter(FN_MALLOC, SP0 - 256, CALLER_RET, 10, 0, 0);
	fake_set_word(SP0 - 256, 0x401500);
	enter(FN_MALLOC, SP0, CALLER_RET, 30, 0, 0);
	is_u64(thr.ncalls, 1, "stale call below sp: dropped");
	leave(SP0, 0x20000);
	is_u64(live_size(0x20000), 30, "stale call below sp: the new call's block");
}

static void
test_invalid_free(void)
{
	reset();
	allocated(FN_MALLOC, 100, 0x10000);
	enter(FN_FREE, SP0, CALLER_RET, 0x10000, 0, 0);
	enter(FN_FREE, SP0, CALLER_RET, 0x10000, 0, 0);
	is_u64(proc.calls[FN_FREE], 2, "double free: two calls");
	is_u64(totals().frees, 1, "double free: one free");
	is_u64(totals().invalid_frees, 1, "double free: one invalid free");
	is_u64(totals().unknown_frees, 1, "double free: an invalid free is unknown too");

	/* While blocks may have been allocated unseen, it is only an unknown free. */
	reset();
	proc.unseen_blocks = 1;
	enter(FN_FREE, SP0, CALLER_RET, 0x10000, 0, 0);
	is_u64(totals().invalid_frees, 0, "free unseen block: no invalid free");
	is_u64(totals().unknown_frees, 1, "free unseen block: an unknown free");
}

static void
test_delete_chain(void)
{
	reset();
	allocated(FN_NEW, 64, 0x10000);
	enter(FN_DEL, SP0, CALLER_RET, 0x10000, 0, 0);
	enter(FN_FREE, SP0 - 8, 0x7f0000200000ull, 0x10000, 0, 0);
	is_u64(proc.calls[FN_DEL], 1, "delete -> free: delete counted");
	is_u64(proc.calls[FN_FREE], 0, "delete -> free: free not counted");
	is_u64(totals().frees, 1, "delete -> free: one free");
	is_u64(totals().invalid_frees, 0, "delete -> free: no invalid free");

	/* Another event between them breaks the chain: a double free. */
	enter(FN_DEL, SP0, CALLER_RET, 0x10000, 0, 0);
	allocated(FN_MALLOC, 1, 0x20000);
	enter(FN_FREE, SP0 - 8, 0x7f0000200000ull, 0x10000, 0, 0);
	is_u64(totals().invalid_frees, 2, "delete, malloc, free: both invalid");
}

static void
test_signal_handler(void)
{
	const uint64_t hsp = SP0 - 1024;	/* the handler's frames */
	unsigned i, seen = 0;

	reset();
	enter(FN_MALLOC, SP0, CALLER_RET, 100, 0, 0);
	call_signal_delivered(&thr, SP0 - 512);
	is_u64(thr.ncalls, 2, "signal: a mark on top of the call in flight");
	call_signal_delivered(&thr, SP0 - 400);
	is_u64(thr.ncalls, 2, "second signal: the same mark");
	enter(FN_MALLOC, hsp, 0x402000, 7, 0, 0);
	is_u64(thr.ncalls, 3, "handler's malloc: a call of its own");
	is_u64(proc.calls[FN_MALLOC], 2, "handler's malloc: counted");
	for (i = 0; i < fk.last_nov; i++)
		seen += fk.last_ov_slot[i] == SP0 && fk.last_ov_ret[i] == CALLER_RET;
	ok(fk.last_nov == 1 && seen == 1, "handler's malloc: the unwind reads the interrupted call's real return address");
	is_u64(leave(hsp, 0x10000), 0x402000, "handler's malloc returns into the handler");
	is_u64(live_size(0x10000), 7, "handler's malloc: its block");
	is_u64(thr.ncalls, 2, "handler's malloc returned: the mark and the outer call remain");
	/* Back from the handler: the outer malloc returns, over the mark. */
	is_u64(leave(SP0, 0x20000), CALLER_RET, "interrupted malloc returns");
	is_u64(live_size(0x20000), 100, "interrupted malloc: its block");
	is_u64(thr.ncalls, 0, "all returned: nothing in flight");
}

static void
test_settle_and_restore(void)
{
	arch_regs regs;

	/* Stopped on the trampoline after the ret, before our trap. */
	reset();
	enter(FN_MALLOC, SP0, CALLER_RET, 100, 0, 0);
	memset(&regs, 0, sizeof(regs));
	arch_set_pc(&regs, FN_ADDR(FN_MALLOC));
	arch_set_sp(&regs, arch_sp_after_ret(SP0));
	arch_set_retval(&regs, 0x10000);
	is_u64(call_settle_io(&thr, &io, &regs), 1, "settle: finishes the return");
	is_u64(arch_pc(&regs), CALLER_RET, "settle: pc is the real return address");
	is_u64(live_size(0x10000), 100, "settle: the block is recorded");
	is_u64(call_settle_io(&thr, &io, &regs), 0, "settle again: nothing to do");

	/* A detach puts back every return address still hijacked. */
	reset();
	enter(FN_MALLOC, SP0, CALLER_RET, 100, 0, 0);
	call_signal_delivered(&thr, SP0 - 512);
	enter(FN_MALLOC, SP0 - 1024, 0x402000, 7, 0, 0);
	call_restore_all_io(&thr, &io);
	is_u64(thr.ncalls, 0, "restore all: nothing in flight");
	is_u64(fake_word(SP0), CALLER_RET, "restore all: outer slot holds the return address again");
	is_u64(fake_word(SP0 - 1024), 0x402000, "restore all: inner slot too");

	/* A slot that no longer holds the trampoline belongs to another frame now. */
	reset();
	enter(FN_MALLOC, SP0, CALLER_RET, 100, 0, 0);
	fake_set_word(SP0, 0x1234);
	call_restore_all_io(&thr, &io);
	is_u64(fake_word(SP0), 0x1234, "restore all: a reused slot is left alone");

	/* A C++ exception's unwinder entry restores them too. */
	reset();
	enter(FN_NEW, SP0, CALLER_RET, 100, 0, 0);
	enter(FN_UNWIND_RAISE, SP0 - 128, 0x403000, 0, 0, 0);
	is_u64(thr.ncalls, 0, "_Unwind_RaiseException: nothing in flight");
	is_u64(fake_word(SP0), CALLER_RET, "_Unwind_RaiseException: the slot is restored");
}

/*
 * --alloc my_malloc=malloc --alloc my_free=free over malloc with an 8-byte
 * header (sqlite3's shape): the malloc and free they make are theirs; a
 * block malloc made unseen by them, freed by my_free at +8, is a free; a
 * pointer inside a live block is an invalid free told as such; a my_malloc
 * left by a longjmp nests nothing after its slot is overwritten.
 */
static void
test_named_over_malloc(void)
{
	const int mm = FN_COUNT, mf = FN_COUNT + 1;
	const uint64_t inner = SP0 - 0x40, in_mm = 0x500010, in_mf = 0x500110;
	struct jt_heap_totals tt;

	reset();
	enter(mm, SP0, CALLER_RET, 100, 0, 0);
	enter(FN_MALLOC, inner, in_mm, 108, 0, 0);
	is_u64(leave(inner, 0x10000), in_mm, "named: the nested malloc is not hijacked");
	is_u64(leave(SP0, 0x10008), CALLER_RET, "named: my_malloc returns to its caller");
	is_u64(proc.calls[mm], 1, "named: my_malloc counted");
	is_u64(proc.calls[FN_MALLOC], 0, "named: its malloc is not");
	ok(live_size(0x10008) == 100 && live_size(0x10000) == -1, "named: one block, my_malloc's, of 100 bytes");
	enter(mf, SP0, CALLER_RET, 0x10008, 0, 0);
	is_u64(thr.ncalls, 1, "named free: in flight until it returns");
	is_u64(fake_word(SP0), FN_ADDR(mf), "named free: its slot holds the trampoline");
	enter(FN_FREE, inner, in_mf, 0x10000, 0, 0);
	is_u64(leave(SP0, 0), CALLER_RET, "named free: returns through its breakpoint to its caller");
	tt = totals();
	ok(thr.ncalls == 0 && tt.frees == 1 && tt.unknown_frees == 0 && tt.live_blocks == 0,
	   "named free: one free, nothing unknown, nothing live (%llu, %llu, %llu)", (unsigned long long)tt.frees,
	   (unsigned long long)tt.unknown_frees, (unsigned long long)tt.live_blocks);
	ok(proc.calls[mf] == 1 && proc.calls[FN_FREE] == 0, "named free: counted once, at its level");

	/* sqlite3's own sqlite3Malloc: malloc's block at p, sqlite3_free(p + 8) frees it with free(p). */
	reset();
	allocated(FN_MALLOC, 32, 0x20000);
	enter(mf, SP0, CALLER_RET, 0x20008, 0, 0);
	ok(thr.ncalls == 1 && thr.calls[0].unmatched, "raw: a named free of no live block waits for its return");
	enter(FN_FREE, inner, in_mf, 0x20000, 0, 0);
	leave(SP0, 0);
	tt = totals();
	ok(tt.frees == 1 && tt.unknown_frees == 0 && tt.invalid_frees == 0 && tt.live_blocks == 0,
	   "raw: the free it made released the block: a free, no invalid one");

	/* A pointer inside a live block, that my_free refuses: an invalid free at its return. */
	reset();
	allocated(FN_MALLOC, 64, 0x30000);
	enter(mf, SP0, CALLER_RET, 0x30010, 0, 0);
	is_u64(totals().invalid_frees, 0, "inside: nothing counted before the return");
	leave(SP0, 0);
	tt = totals();
	ok(tt.invalid_frees == 1 && tt.inside_frees == 1 && tt.live_blocks == 1,
	   "inside: at the return, an invalid free inside a live block; the block stays");

	/* A longjmp out of my_malloc: its slot then holds another return address. */
	reset();
	enter(mm, SP0, CALLER_RET, 100, 0, 0);
	fake_set_word(SP0, CALLER_RET + 0x40);
	enter(FN_MALLOC, SP0 - 0x80, CALLER_RET + 0x80, 16, 0, 0);
	ok(thr.ncalls == 1 && thr.calls[0].fn == FN_MALLOC && proc.calls[FN_MALLOC] == 1,
	   "left: the malloc after a longjmp out of my_malloc is the program's");
	leave(SP0 - 0x80, 0x40000);
	is_u64(live_size(0x40000), 16, "left: its block is recorded");
}

int
main(void)
{
	char why[128];

	if (alloc_named_add("my_malloc=malloc", 0, why, sizeof(why)) < 0 ||
	    alloc_named_add("my_free=free", 0, why, sizeof(why)) < 0)
		return fprintf(stderr, "alloc_named_add: %s\n", why), 1;
	test_malloc_pair();
	test_free();
	test_free_unwind_failed();
	test_realloc();
	test_posix_memalign();
	test_tail_and_nested();
	test_invalid_free();
	test_delete_chain();
	test_signal_handler();
	test_settle_and_restore();
	test_named_over_malloc();
	heap_destroy(proc.heap);
	return tap_done();
}
