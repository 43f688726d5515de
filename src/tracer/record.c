/* record.c - what one allocator call does to a process's tables, whichever event source saw it. */
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"
#include "heap.h"
#include "own.h"
#include "pages.h"
#include "proc.h"
#include "record.h"

int
record_max_pcs(const struct jt_options *opt)
{
	return opt->depth + 2 < RECORD_MAX_PCS ? (int)opt->depth + 2 : RECORD_MAX_PCS;
}

uint64_t
record_size(int fn, const arch_regs *regs)
{
	const struct jt_fn_desc *d = &alloc_fns[fn];
	uint64_t size = arch_arg(regs, d->size_arg);

	if (d->size_arg2 != 0xff) {
		uint64_t b = arch_arg(regs, d->size_arg2), r;
		size = __builtin_mul_overflow(size, b, &r) ? UINT64_MAX : r;
	}
	return size;
}

uint64_t
record_free_ptr(int fn, const arch_regs *regs)
{
	return arch_arg(regs, alloc_fns[fn].ptr_arg);
}

int
record_broken_down(uint64_t size, const struct jt_options *opt)
{
	return size >= opt->min_size && (!opt->max_size || size <= opt->max_size);
}

/* record_intern into the stack table h (the heap's, or the page table's). */
static uint32_t
record_intern_in(struct jt_heap *h, const uint64_t *pcs, int n, int copy_ended, const struct jt_options *opt)
{
	int cut = n > (int)opt->depth + 1;

	return heap_stack_intern_cut(h, pcs + 1, cut ? opt->depth : n > 1 ? (unsigned)n - 1 : 0,
				     cut ? HEAP_CUT_DEPTH : copy_ended ? HEAP_CUT_COPY : 0);
}

uint32_t
record_intern(struct jt_proc *p, const uint64_t *pcs, int n, int copy_ended, const struct jt_options *opt)
{
	return record_intern_in(p->heap, pcs, n, copy_ended, opt);
}

int
record_unwinds(int fn, uint64_t size, const struct jt_options *opt)
{
	return alloc_fn_is_pages(fn) ? fn != FN_MUNMAP : record_broken_down(size, opt);
}

uint32_t
record_stack(struct jt_proc *p, int fn, int unwound, const uint64_t *pcs, int n, int copy_ended,
	     const struct jt_options *opt)
{
	struct jt_heap *h = alloc_fn_is_pages(fn) ? p->pages : p->heap;

	return unwound ? record_intern_in(h, pcs, n, copy_ended, opt) : heap_filtered_stack(h);
}

void
record_pages_fill(struct jt_call *c, const arch_regs *regs)
{
	if (!alloc_fn_is_pages(c->fn))
		return;
	c->len2 = arch_arg(regs, 1);
	c->flags = arch_arg(regs, 3);
}

uint32_t
record_free_unmatched(struct jt_proc *p, int fn, uint64_t ptr, const uint64_t *pcs, int n, int complete,
		      const struct jt_options *opt)
{
	if (n > 0 && own_free_is_libc(&p->own, pcs, n, complete))
		return UINT32_MAX;
	p->calls[fn]++;
	return ptr ? record_intern(p, pcs, n, 0, opt) : UINT32_MAX;
}

void
record_unmatched_held(struct jt_proc *p, struct jt_call *held, uint64_t ptr, uint32_t stack_id)
{
	if (stack_id == UINT32_MAX)
		return;
	if (!held) {
		record_unmatched(p, ptr, stack_id);
		return;
	}
	held->unmatched = 1;
	held->stack_id = stack_id;
}

void
record_free_nested(struct jt_thread *t, struct jt_call *c, uint64_t ptr)
{
	if (c->fn != CALL_SIGNAL && c->unmatched && ptr && record_free(t, ptr) == 0)
		c->unmatched = 0;
}

void
record_unmatched(struct jt_proc *p, uint64_t ptr, uint32_t stack_id)
{
	if (p->unseen_blocks)
		heap_unknown_free(p->heap);
	else
		heap_invalid_free(p->heap, stack_id, heap_find_inside(p->heap, ptr, NULL) == 0);
}

void
record_call_fill(struct jt_call *c, int fn, uint64_t slot, uint64_t ret, uint64_t trampoline, uint64_t size,
		 const arch_regs *regs, uint32_t stack_id)
{
	memset(c, 0, sizeof(*c));
	c->fn = fn;
	c->entry_sp = slot;
	c->ret_addr = ret;
	c->trampoline = trampoline;
	c->size = size;
	if (alloc_fns[fn].ptr_arg != 0xff)
		c->ptr_arg = arch_arg(regs, alloc_fns[fn].ptr_arg);
	c->stack_id = stack_id;
}

int
record_free(struct jt_thread *t, uint64_t ptr)
{
	int temporary = ptr && ptr == t->last_alloc;

	t->last_alloc = 0;
	return heap_free(t->proc->heap, ptr, NULL, temporary);
}

static void
record_alloc(struct jt_thread *t, uint64_t block, const struct jt_call *c)
{
	heap_alloc(t->proc->heap, block, c->size, c->stack_id);
	t->last_alloc = block;
}

/* realloc released ptr: a free (as heaptrack counts it), or an unmatched one made from the realloc's stack. */
static void
record_realloc_free(struct jt_thread *t, const struct jt_call *c)
{
	if (record_free(t, c->ptr_arg) < 0)
		record_unmatched(t->proc, c->ptr_arg, c->stack_id);
}

/* A system call wrapper's failure: -1 (MAP_FAILED), or a raw -errno. */
static int
record_failed(uint64_t ret)
{
	return ret >= (uint64_t)-4095;
}

/*
 * A pages function (--pages) returned ret: its pages go in or out of the
 * page table. Only anonymous private mappings are counted; any mapping
 * takes what it covers out of the regions before (MAP_FIXED over them).
 */
static void
record_pages(struct jt_proc *p, const struct jt_call *c, uint64_t ret)
{
	int64_t incr = (int64_t)c->size;

	switch (alloc_fns[c->fn].kind) {
	case FK_MMAP:
		if (record_failed(ret))
			break;
		if ((c->flags & MAP_ANONYMOUS) && (c->flags & MAP_TYPE) == MAP_PRIVATE)
			pages_map(p->pages, ret, pages_round(c->size), c->stack_id);
		else
			pages_unmap(p->pages, ret, pages_round(c->size));
		break;
	case FK_MUNMAP:
		if (ret == 0)
			pages_unmap(p->pages, c->ptr_arg, pages_round(c->size));
		break;
	case FK_MREMAP:
		if (!record_failed(ret))
			pages_remap(p->pages, c->ptr_arg, pages_round(c->len2), ret, pages_round(c->size), c->stack_id,
				    (c->flags & MREMAP_DONTUNMAP) != 0);
		break;
	case FK_SBRK:
		if (ret == (uint64_t)-1)
			break;
		/* The break moves by exactly incr bytes: counted as asked, not in whole pages. */
		if (incr > 0)
			pages_map(p->pages, ret, (uint64_t)incr, c->stack_id);
		else if (incr < 0)
			pages_unmap(p->pages, ret + incr, (uint64_t)-incr);
		p->brk_cur = ret + incr;
		break;
	case FK_BRK:
		if (ret != 0)
			break;
		/* Relative to the break the last sbrk or brk we saw left; the first one only tells it. */
		if (p->brk_cur && c->ptr_arg > p->brk_cur)
			pages_map(p->pages, p->brk_cur, c->ptr_arg - p->brk_cur, c->stack_id);
		else if (p->brk_cur && c->ptr_arg < p->brk_cur)
			pages_unmap(p->pages, c->ptr_arg, p->brk_cur - c->ptr_arg);
		p->brk_cur = c->ptr_arg;
		break;
	default:
		break;
	}
}

void
record_finish(struct jt_thread *t, const struct jt_mem_ops *mem, const struct jt_call *c, uint64_t ret)
{
	uint64_t block;

	switch (alloc_fns[c->fn].kind) {
	case FK_ALLOC:
	case FK_CALLOC:
		if (ret)
			record_alloc(t, ret, c);
		break;
	case FK_REALLOC:
		if (ret) {
			if (c->ptr_arg)
				record_realloc_free(t, c);
			record_alloc(t, ret, c);
		} else if (c->size == 0 && c->ptr_arg) {
			/* glibc's realloc(p, 0) frees p and returns NULL. */
			record_realloc_free(t, c);
		}
		break;
	case FK_FREE:
		/* A named free of no live block, and no free it made released one. */
		if (c->unmatched)
			record_unmatched(t->proc, c->ptr_arg, c->stack_id);
		break;
	case FK_MEMALIGN_PTR:
		if (ret == 0 && mem->read(mem->arg, c->ptr_arg, &block, sizeof(block)) == 0 && block)
			record_alloc(t, block, c);
		break;
	default:
		if (alloc_fn_is_pages(c->fn) && t->proc->pages)
			record_pages(t->proc, c, ret);
		break;
	}
}
