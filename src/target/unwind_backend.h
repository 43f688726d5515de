/* unwind_backend.h - the table of functions each unwinder backend fills, and the state the backends share; private to src/target/unwind*.c. */
#ifndef JT_UNWIND_BACKEND_H
#define JT_UNWIND_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind.h"

struct jt_module;
struct jt_modules;

/*
 * One way of unwinding, as strace keeps its libdw and libunwind unwinders.
 * state is whatever new returned, shared by every tracer thread that
 * unwinds the process; scratch is whatever ctx_new returned, one per
 * jt_unwind_ctx, for one unwind at a time. stack has the contract of
 * unwind_stack_ctx and may run concurrently with itself (unwind.h); it
 * leaves the overrides in ctx to its caller to clear.
 */
struct uw_backend {
	const char *name;	/* what --unwinder selects it by */
	int id;			/* its UW_BACKEND_* index into jt_unwind_ctx.scratch */
	void *(*new)(struct jt_modules *mods);	/* NULL on failure */
	void (*destroy)(void *state);
	void *(*ctx_new)(void);			/* never NULL */
	void (*ctx_free)(void *scratch);
	int (*stack)(void *state, struct jt_unwind_ctx *ctx, pid_t tid, const arch_regs *regs, uint64_t *pcs,
		     int max);
};

#define UW_BACKEND_DW		0
#define UW_BACKEND_LIBUNWIND	1
#define UW_NBACKENDS		2

#define UW_MAX_OVERRIDES UNWIND_MAX_OVERRIDES

/* The return address slots unwind_override replaced, for one unwind_stack. */
struct uw_overrides {
	uint64_t addr[UW_MAX_OVERRIDES], value[UW_MAX_OVERRIDES];
	int n;
};

/* The copy of the stack unwind_ctx_stack gave for one unwind; unset, the live stack is read. */
struct uw_stack_copy {
	int set;			/* even for len 0: nothing of the stack is then readable */
	uint64_t base;
	const uint8_t *data;
	size_t len;
};

/* Whether the copy holds all of [addr, addr + len). */
static inline int
uw_stack_holds(const struct uw_stack_copy *s, uint64_t addr, size_t len)
{
	return s->set && addr >= s->base && addr - s->base <= s->len && len <= s->len - (addr - s->base);
}

/* The state of one unwind in progress, owned by its caller (one per tracer thread). */
struct jt_unwind_ctx {
	struct uw_overrides ov;		/* cleared when each unwind_stack_ctx returns */
	struct uw_stack_copy stack;	/* likewise */
	int copy_ended;			/* the last unwind_stack_ctx asked for bytes above its stack copy: cut short there */
	struct jt_unwind_memo **memo;	/* unwind_ctx_memo's, for the next unwind only */
	int memo_joined;		/* the memo frame the last unwind joined at, or -1 */
	/* unwind_ctx_trampoline's and unwind_ctx_returned's, cleared with the overrides */
	uint64_t tramp, tramp_len;
	uint64_t ret_slot[UNWIND_MAX_RETURNED], ret_addr[UNWIND_MAX_RETURNED];
	int nret;
	void *scratch[UW_NBACKENDS];	/* each backend's, made at its first unwind */
};

/* Whether pc is in ctx's uretprobe trampoline (unwind_ctx_trampoline). */
static inline int
uw_in_trampoline(const struct jt_unwind_ctx *ctx, uint64_t pc)
{
	return pc - ctx->tramp < ctx->tramp_len;
}

/*
 * An interrupted pc and stack pointer in ctx's trampoline: the return
 * address and stack pointer the unwind goes on from (unwind.h), and 1; 0
 * when no call fits. read reads a stack word as the backend does.
 */
int uw_trampoline_exit(const struct jt_unwind_ctx *ctx, uint64_t pc, uint64_t sp,
		       int (*read)(void *arg, uint64_t addr, uint64_t *v), void *arg, uint64_t *ret, uint64_t *ret_sp);

/* be's scratch in ctx, made on first use. */
void *uw_ctx_scratch(struct jt_unwind_ctx *ctx, const struct uw_backend *be);

/* Adds one; past UW_MAX_OVERRIDES it says so and drops it. */
void uw_overrides_add(struct uw_overrides *ov, uint64_t addr, uint64_t value);

/*
 * A backend's read of [addr, addr + len) in an unwind whose ctx has a
 * stack copy: returns 0 with the bytes copied out of it into out, 1 when
 * the range lies in one module of mods and is to be read live (its bytes
 * do not change as the thread runs on), else -1 (and, for a range above
 * the copy, sets ctx's copy_ended). Overrides are the caller's to apply.
 */
int uw_stack_read(struct jt_unwind_ctx *ctx, const struct jt_modules *mods, uint64_t addr, void *out,
		  size_t len);

extern const struct uw_backend uw_backend_libunwind;	/* unwind_lu.c */
extern const struct uw_backend uw_backend_dw;		/* unwind_dw.c */

/* ---- the libunwind backend's per-module index (unwind_lu_index.c) ---- */

#define UW_MAX_RO	8	/* read-only PT_LOAD ranges remembered per module */

/* One row of a binary search table, as in .eh_frame_hdr; both relative to segbase. */
struct uw_entry {
	int32_t start_ip_offset;
	int32_t fde_offset;
};

/* The unwind index of one module; everything in it is link-time, so it survives a reload. */
struct jt_unwind_index {
	uint64_t eh_addr;		/* link-time address of .eh_frame: segbase - bias */
	struct uw_entry *tab;		/* sorted by start_ip_offset */
	size_t n;			/* 0: no usable .eh_frame */
	uint64_t ro_lo[UW_MAX_RO], ro_hi[UW_MAX_RO];	/* non-writable PT_LOADs */
	int n_ro;
};

/*
 * Builds mod's index from the module's file and attaches it to mod; an
 * empty one when the file is unusable, so it is tried once. NULL only when
 * mod has no room for it. The caller holds the module set's elf_lock.
 */
const struct jt_unwind_index *uw_index_build(struct jt_module *mod);

/* mod's index if it was built, else NULL; needs no lock. */
const struct jt_unwind_index *uw_index_peek(const struct jt_module *mod);

/* Frees a module's index; NULL is a no-op. */
void unwind_index_free(struct jt_unwind_index *ix);

#endif
