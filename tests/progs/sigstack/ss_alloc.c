/*
 * ss_alloc.c - the program's own allocator: malloc, calloc, realloc and free (and the
 * aligned forms, so a static link takes none of glibc's) over a static arena. Taking a
 * block is one atomic add, and free gives the block back (realloc grows it in place) only
 * while it is the last one taken, with a compare-and-swap; so a signal handler may
 * allocate while the code it interrupted is inside one of these. When ss_kick is set, the
 * next call sends that signal to its own thread from its middle, after it took its
 * block: the handler runs while the call is in flight, exactly at the KICK line.
 */
#define _GNU_SOURCE	/* gettid */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sigstack.h"

#define SS_ARENA (16u << 20)
#define SS_ALIGN 16u

/* Just below each block: where it lies in the arena, and the size asked for. */
struct ss_head {
	uint32_t at, end;
	size_t size;
};

static unsigned char ss_arena[SS_ARENA] __attribute__((aligned(SS_ALIGN)));
static size_t ss_used;

/*
 * tgkill(getpid(), gettid(), sig) in one asm statement: the kernel delivers the signal as
 * the syscall returns, so the interrupted pc is the nop, on the line of the KICK.
 */
#define KICK() do { \
	long sig_ = ss_kick, pid_ = getpid(), tid_ = gettid(), r_; \
	ss_kick = 0; \
	__asm__ volatile("syscall\n\tnop" : "=a"(r_) : "0"((long)SYS_tgkill), "D"(pid_), "S"(tid_), "d"(sig_) \
			 : "rcx", "r11", "memory"); \
	(void)r_; \
} while (0)

/* Arena bytes a block of size bytes at alignment align takes, header and padding included. */
static size_t
ss_need(size_t size, size_t align)
{
	return (size + sizeof(struct ss_head) + align + SS_ALIGN - 1) & ~(size_t)(SS_ALIGN - 1);
}

static struct ss_head *
ss_head(void *p)
{
	return (struct ss_head *)p - 1;
}

static void *
ss_take(size_t size, size_t align)
{
	size_t need, at;
	unsigned char *p;

	if (align < SS_ALIGN)
		align = SS_ALIGN;
	if (size > SS_ARENA || (align & (align - 1)))
		return NULL;
	need = ss_need(size, align);
	at = __atomic_fetch_add(&ss_used, need, __ATOMIC_RELAXED);
	if (at + need > SS_ARENA)
		return NULL;
	p = ss_arena + at + sizeof(struct ss_head);
	p += (size_t)(-(uintptr_t)p & (align - 1));
	*ss_head(p) = (struct ss_head){ (uint32_t)at, (uint32_t)(at + need), size };
	return p;
}

/* Moves the end of p's block to end, if p is still the last block taken. */
static int
ss_move_end(void *p, size_t end)
{
	size_t expect = ss_head(p)->end;

	if (end > SS_ARENA || !__atomic_compare_exchange_n(&ss_used, &expect, end, 0, __ATOMIC_RELAXED,
							    __ATOMIC_RELAXED))
		return 0;
	ss_head(p)->end = (uint32_t)end;
	return 1;
}

/* Frees p: gives its bytes back to the arena if it is the last block taken. */
static void
ss_give_back(void *p)
{
	if (p)
		ss_move_end(p, ss_head(p)->at);
}

void *
malloc(size_t size)
{
	void *p = ss_take(size, 0);

	if (ss_kick)
		KICK(); /* KICK:malloc */
	return p;
}

void *
calloc(size_t n, size_t each)
{
	size_t size;
	void *p;

	if (__builtin_mul_overflow(n, each, &size))
		return NULL;
	p = ss_take(size, 0);
	if (p)
		memset(p, 0, size);
	if (ss_kick)
		KICK(); /* KICK:calloc */
	return p;
}

void *
realloc(void *old, size_t size)
{
	void *p = old;

	/* In place when old is the last block and was not aligned past its header. */
	if (!old || (unsigned char *)old != ss_arena + ss_head(old)->at + sizeof(struct ss_head)
	    || !ss_move_end(old, ss_head(old)->at + ss_need(size, SS_ALIGN))) {
		p = ss_take(size, 0);
		if (p && old)
			memcpy(p, old, ss_head(old)->size < size ? ss_head(old)->size : size);
		ss_give_back(old);
	} else {
		ss_head(p)->size = size;
	}
	if (ss_kick)
		KICK(); /* KICK:realloc */
	return p;
}

void
free(void *p)
{
	ss_give_back(p);
}

void *
memalign(size_t align, size_t size)
{
	return ss_take(size, align);
}

void *
aligned_alloc(size_t align, size_t size)
{
	return ss_take(size, align);
}

int
posix_memalign(void **out, size_t align, size_t size)
{
	void *p = ss_take(size, align);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *
valloc(size_t size)
{
	return ss_take(size, 4096);
}

void *
pvalloc(size_t size)
{
	return ss_take((size + 4095) & ~(size_t)4095, 4096);
}

size_t
malloc_usable_size(void *p)
{
	return p ? ss_head(p)->size : 0;
}
