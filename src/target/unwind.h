/* unwind.h - remote stack unwinding of a stopped thread (libdw or libunwind backend behind a small interface). */
#ifndef JT_UNWIND_H
#define JT_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

struct jt_modules;
struct jt_unwind;
struct jt_unwind_ctx;

/*
 * Concurrency. A jt_unwind belongs to one process and holds what every
 * unwind of it shares: the module set's unwind info and the caches built
 * from it. A jt_unwind_ctx holds the state of one unwind in progress and
 * the overrides for it; its owner (one tracer thread) uses it for one
 * unwind at a time, of any process.
 *
 * May run at the same time, from several threads, without a lock of the
 * caller's: unwind_stack_ctx on one jt_unwind (one process), each thread
 * with its own ctx (and unwind_ctx_override on that ctx), while the module
 * set is not changed. The shared caches are filled on a miss under the
 * unwinder's own lock; a hit takes no more than one read lock per unwind.
 *
 * Need the caller's exclusion (no unwind of that jt_unwind in progress):
 * changing its module set (modules_refresh, modules_clear), and
 * unwind_destroy. unwind_stack and unwind_override share one ctx of the
 * unwinder's own, so at most one thread at a time may use those two.
 */

/*
 * Creates an unwinder with the default backend over the given module set (not
 * owned; it must outlive the unwinder). Returns NULL only if the backend
 * cannot create its state.
 */
struct jt_unwind *unwind_new(struct jt_modules *mods);

/*
 * unwind_new with the backend chosen by name (--unwinder): "dw" (libdw CFI
 * compiled into per-pc rules; the default, about 4x faster) or "libunwind".
 * NULL or "" is the default. Returns NULL for an unknown name.
 */
struct jt_unwind *unwind_new_backend(struct jt_modules *mods, const char *name);

/* Non-zero when name is a backend unwind_new_backend accepts (NULL: the default). */
int unwind_backend_known(const char *name);
void unwind_destroy(struct jt_unwind *u);

/*
 * A context for unwinds by one thread at a time, with any unwinder and
 * backend; each backend adds its scratch at its first unwind (the libunwind
 * backend's is about 1 MiB of page cache). Never NULL. unwind_ctx_free
 * takes NULL.
 */
struct jt_unwind_ctx *unwind_ctx_new(void);
void unwind_ctx_free(struct jt_unwind_ctx *ctx);

/*
 * Set in pcs[i] when frame i is a signal frame: pcs[i] is the sigreturn
 * trampoline a handler returns to (glibc's __restore_rt), and pcs[i + 1] is
 * the pc the signal interrupted, an exact address rather than a return
 * address. Captured with the stack; report.c names the frame.
 */
#define UNWIND_PC_SIGNAL ARCH_PC_MARK

/* The address of a captured pc, without its mark. */
static inline uint64_t unwind_pc_addr(uint64_t pc) { return pc & ~UNWIND_PC_SIGNAL; }

/* Return address slots one unwind_stack can be told about: one per call in flight. */
#define UNWIND_MAX_OVERRIDES 16

/*
 * Unwinds the stopped thread tid whose registers are regs, with ctx for
 * its state, and stores up to max pcs, innermost first: pcs[0] is the pc
 * of regs, the others are return addresses, but for the marks
 * UNWIND_PC_SIGNAL describes. Returns the number stored (>= 1), or -1 on
 * a failure to even start. Reads target memory in bulk
 * (process_vm_readv), caches unwind info across calls in u, and never
 * uses one ptrace call per word. Clears ctx's overrides.
 */
int unwind_stack_ctx(struct jt_unwind *u, struct jt_unwind_ctx *ctx, pid_t tid, const arch_regs *regs,
		     uint64_t *pcs, int max);

/*
 * Tells the next unwind_stack_ctx with ctx that the 8-byte stack slot at
 * addr reads as value (a return address jmptrace replaced). Up to
 * UNWIND_MAX_OVERRIDES.
 */
void unwind_ctx_override(struct jt_unwind_ctx *ctx, uint64_t addr, uint64_t value);

/*
 * For the next unwind_stack_ctx with ctx only: the stack bytes at
 * [base, base + len) are data, a copy taken when the thread was probed
 * (the thread has run on since). Reads inside that range come from the
 * copy (after the overrides of unwind_ctx_override, which still win);
 * reads elsewhere are served only inside a module of the process (code
 * and read-only data as mapped: the CFI, a sigreturn trampoline's bytes),
 * and fail anywhere else, so the unwind stops where the copy ends instead
 * of following a stack that has moved on. data must stay valid until that
 * unwind returns. Cleared, like the overrides, when it returns.
 */
void unwind_ctx_stack(struct jt_unwind_ctx *ctx, uint64_t base, const void *data, size_t len);
/*
 * For the next unwind_stack_ctx with ctx only: the kernel's uretprobe
 * trampoline lies at [start, start + len) (the uprobe source's). A signal
 * can interrupt a thread there, on its way back from a probed call, and
 * its handler's stack would end at that pc, in no module. The unwind goes
 * on from the call's return address instead, at the stack pointer its
 * return leaves, as if the signal had come a moment later: the call's
 * that is in flight with its slot (unwind_ctx_override) just above the
 * interrupted stack pointer, or else the call's that returned
 * (unwind_ctx_returned) if the kernel has put its return address back in
 * its slot. Up to UNWIND_MAX_RETURNED returned calls.
 */
#define UNWIND_MAX_RETURNED 2
void unwind_ctx_trampoline(struct jt_unwind_ctx *ctx, uint64_t start, uint64_t len);
void unwind_ctx_returned(struct jt_unwind_ctx *ctx, uint64_t slot, uint64_t ret);
/* Whether a thread in the trampoline at stack pointer sp may be returning from the call whose slot is slot. */
int unwind_trampoline_near(uint64_t slot, uint64_t sp);

/* Non-zero when the last unwind_stack_ctx with ctx stopped because it needed stack above its copy. */
int unwind_ctx_copy_ended(const struct jt_unwind_ctx *ctx);

/*
 * A thread's memo: its last walk, kept with what the walk's result depended
 * on (the registers and stack words it used), so that the thread's next
 * unwind, on reaching one of those frames in the same state, takes the
 * rest of the walk instead of stepping it. A loop that allocates from the
 * same frames (most do) then pays for the frames that changed. Exact: a
 * frame is joined only where stepping on would read the same words and so
 * give the same frames. The default backend keeps one; libunwind ignores it.
 *
 * For the next unwind_stack_ctx with ctx only: *memo is the memo of the
 * thread unwound (NULL at first: the unwind makes it), which the unwind
 * uses and then replaces. Whoever owns the thread's state owns the memo,
 * frees it with unwind_memo_free (takes NULL), and uses it in one unwind
 * at a time.
 */
struct jt_unwind_memo;
void unwind_ctx_memo(struct jt_unwind_ctx *ctx, struct jt_unwind_memo **memo);
void unwind_memo_free(struct jt_unwind_memo *memo);
/* The frame of its memo the last unwind_stack_ctx with ctx joined at, or -1 (tests, -v). */
int unwind_ctx_memo_joined(const struct jt_unwind_ctx *ctx);

/* unwind_stack_ctx and unwind_ctx_override with u's own ctx (one caller at a time). */
int unwind_stack(struct jt_unwind *u, pid_t tid, const arch_regs *regs, uint64_t *pcs, int max);
void unwind_override(struct jt_unwind *u, uint64_t addr, uint64_t value);

#endif
