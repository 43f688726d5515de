/* record.h - what one allocator call does to a process's tables, whichever event source saw it. */
#ifndef JT_RECORD_H
#define JT_RECORD_H

#include <stdint.h>

#include "arch.h"
#include "mem.h"
#include "options.h"

struct jt_thread;
struct jt_proc;
struct jt_heap;
struct jt_call;
struct jt_options;

/* The function's own frame, --depth frames, and one more to tell a cut stack. */
#define RECORD_MAX_PCS (JT_MAX_DEPTH + 2)

/* How many pcs to unwind for --depth: at most RECORD_MAX_PCS. */
int record_max_pcs(const struct jt_options *opt);

/* Bytes the call of fn asks for, from its arguments in regs (calloc's product saturates). */
uint64_t record_size(int fn, const arch_regs *regs);

/* The block a free-kind call of fn releases, from its arguments in regs (--alloc may move it). */
uint64_t record_free_ptr(int fn, const arch_regs *regs);

/* Non-zero when size is inside --min-size/--max-size: the allocation is broken down by stack. */
int record_broken_down(uint64_t size, const struct jt_options *opt);

/*
 * Interns the stack unwound into pcs[0..n), less frame 0 (the allocator or
 * free itself), cut at --depth; copy_ended: the unwind stopped at the end of
 * a copied stack (--stack-copy), so the stack is marked as cut there.
 */
uint32_t record_intern(struct jt_proc *p, const uint64_t *pcs, int n, int copy_ended, const struct jt_options *opt);
/*
 * Whether an entry of fn asking for size bytes is unwound: an allocation
 * inside --min-size/--max-size, and every pages function (--pages) but
 * munmap, which only takes pages away.
 */
int record_unwinds(int fn, uint64_t size, const struct jt_options *opt);
/*
 * The stack an entry of fn is recorded under: the one unwound into
 * pcs[0..n) (record_intern's rules) when unwound, else the filtered one;
 * in the page table's stack table for a pages function, else the heap's.
 */
uint32_t record_stack(struct jt_proc *p, int fn, int unwound, const uint64_t *pcs, int n, int copy_ended,
		      const struct jt_options *opt);
/* A pages function's call c also keeps mremap's old length and the flags, from regs at its entry. */
void record_pages_fill(struct jt_call *c, const arch_regs *regs);

/*
 * Fills c as a call of fn entered with its return address ret in the slot
 * at slot (which now holds trampoline), asking for size bytes, made from
 * stack stack_id; the old block or out pointer is read from regs.
 */
void record_call_fill(struct jt_call *c, int fn, uint64_t slot, uint64_t ret, uint64_t trampoline, uint64_t size,
		      const arch_regs *regs, uint32_t stack_id);

/*
 * Records a free of ptr by t: temporary when ptr is t's last allocation,
 * with no other since (heaptrack's definition, kept per thread). Any free
 * ends that. Returns heap_free's result.
 */
int record_free(struct jt_thread *t, uint64_t ptr);

/*
 * The program released ptr, which was no live block. While every block is
 * allocated in our sight it is an invalid free, made from stack_id (told
 * apart when ptr lies inside a live block); otherwise it may be a block
 * allocated unseen: an unknown free.
 */
void record_unmatched(struct jt_proc *p, uint64_t ptr, uint32_t stack_id);

/*
 * A free by fn of ptr (NULL, or no live block), whose stack was unwound into
 * pcs[0..n), complete when the unwind reached the stack's end (neither cut
 * at its most frames nor at a copied stack's end): the C library's own
 * teardown frees are nothing;
 * anything else is the program's call, counted, and an unmatched free when
 * ptr is set: returns its stack id for record_unmatched_held, else UINT32_MAX.
 */
uint32_t record_free_unmatched(struct jt_proc *p, int fn, uint64_t ptr, const uint64_t *pcs, int n, int complete,
			       const struct jt_options *opt);

/*
 * The unmatched free of ptr made from stack_id (UINT32_MAX: none) by a free
 * that held is in flight for, or NULL: without a held call it is recorded
 * now (record_unmatched); with one, at the call's return (record_finish),
 * unless a free made inside it releases a block first (record_free_nested).
 * Debian's sqlite3 allocates p = malloc(n + 8) unseen by a named allocator,
 * and sqlite3_free(p + 8) releases it with free(p): a free after all.
 */
void record_unmatched_held(struct jt_proc *p, struct jt_call *held, uint64_t ptr, uint32_t stack_id);

/*
 * A free of ptr nested in c, the innermost call in flight of t: the named
 * free's own business, recorded only when c's pointer was no live block
 * and this free releases one (the block it stood for).
 */
void record_free_nested(struct jt_thread *t, struct jt_call *c, uint64_t ptr);

/*
 * Call c returned ret: records what it allocated and released. mem reads
 * posix_memalign's out pointer.
 */
void record_finish(struct jt_thread *t, const struct jt_mem_ops *mem, const struct jt_call *c, uint64_t ret);

#endif
