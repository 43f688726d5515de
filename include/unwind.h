/* unwind.h - remote stack unwinding of a stopped thread (libdw or libunwind backend behind a small interface). */
#ifndef JT_UNWIND_H
#define JT_UNWIND_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "arch.h"

struct jt_modules;
struct jt_unwind;

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
 * Unwinds the stopped thread tid whose registers are regs, and stores up to
 * max pcs, innermost first: pcs[0] is regs->rip, the others are return
 * addresses, but for the marks UNWIND_PC_SIGNAL describes. Returns the
 * number stored (>= 1), or -1 on a failure to even start. Reads target
 * memory in bulk (process_vm_readv), caches unwind info across calls, and
 * never uses one ptrace call per word.
 */
int unwind_stack(struct jt_unwind *u, pid_t tid, const struct user_regs_struct *regs, uint64_t *pcs, int max);

/*
 * Tells the unwinder that for this one call the 8-byte stack slot at addr
 * reads as value (a return address jmptrace replaced). Cleared by
 * unwind_stack when it returns. Up to UNWIND_MAX_OVERRIDES.
 */
void unwind_override(struct jt_unwind *u, uint64_t addr, uint64_t value);

/* Drops cached unwind info (after execve replaced the image). */
void unwind_flush(struct jt_unwind *u);

struct jt_unwind_index;
/* Frees a module's unwind index (built lazily by unwind_stack); NULL is a no-op. */
void unwind_index_free(struct jt_unwind_index *ix);

#endif
