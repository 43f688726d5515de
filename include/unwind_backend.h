/* unwind_backend.h - the table of functions each unwinder backend fills; private to unwind.c and unwind_dw.c. */
#ifndef JT_UNWIND_BACKEND_H
#define JT_UNWIND_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "unwind.h"

struct jt_module;
struct jt_modules;

/*
 * One way of unwinding, as strace keeps its libdw and libunwind unwinders.
 * Each function has the contract of the unwind_* function of the same name
 * in unwind.h; state is whatever new returned.
 */
struct uw_backend {
	const char *name;	/* what --unwinder selects it by */
	void *(*new)(struct jt_modules *mods);	/* NULL on failure */
	void (*destroy)(void *state);
	int (*stack)(void *state, pid_t tid, const struct user_regs_struct *regs, uint64_t *pcs, int max);
	void (*override)(void *state, uint64_t addr, uint64_t value);
	void (*flush)(void *state);
};

#define UW_MAX_OVERRIDES UNWIND_MAX_OVERRIDES

/* The return address slots unwind_override replaced, for one unwind_stack. */
struct uw_overrides {
	uint64_t addr[UW_MAX_OVERRIDES], value[UW_MAX_OVERRIDES];
	int n;
};

/* Adds one; past UW_MAX_OVERRIDES it says so and drops it. */
void uw_overrides_add(struct uw_overrides *ov, uint64_t addr, uint64_t value);

/* Where DWARF registers 0..16 (rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip) sit in user_regs_struct. */
extern const size_t uw_user_offset[17];

extern const struct uw_backend uw_backend_libunwind;	/* unwind.c */
extern const struct uw_backend uw_backend_dw;		/* unwind_dw.c */

#endif
