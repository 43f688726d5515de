/*
 * ss_alloc.c - the program's own allocator: malloc, calloc, realloc and free (and the
 * aligned forms, so a static link takes none of glibc's) over a static arena. Taking a
 * block is one atomic add, so a signal handler may allocate while the code it interrupted
 * is inside one of these; free keeps nothing. When ss_kick is set, the next call sends
 * that signal to its own thread from its middle, after it took its block: the handler
 * runs while the call is in flight, exactly at the KICK line.
 */
#define _GNU_SOURCE	/* gettid */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sigstack.h"

#define SS_ARENA (16u << 20)
#define SS_ALIGN 16u

/* Each block starts with its size, one alignment unit before the pointer returned. */
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

static void *
ss_take(size_t size, size_t align)
{
	size_t need, at, pad;
	unsigned char *p;

	if (align < SS_ALIGN)
		align = SS_ALIGN;
	if (size > SS_ARENA || (align & (align - 1)))
		return NULL;
	need = (size + SS_ALIGN + align + SS_ALIGN - 1) & ~(size_t)(SS_ALIGN - 1);
	at = __atomic_fetch_add(&ss_used, need, __ATOMIC_RELAXED);
	if (at + need > SS_ARENA)
		return NULL;
	p = ss_arena + at + SS_ALIGN;
	pad = (size_t)(-(uintptr_t)p & (align - 1));
	p += pad;
	memcpy(p - sizeof(size_t), &size, sizeof(size));
	return p;
}

static size_t
ss_size(const void *p)
{
	size_t size;

	memcpy(&size, (const unsigned char *)p - sizeof(size_t), sizeof(size));
	return size;
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
		memset(p, 0, size);	/* the arena is zero, but a caller may count on it anyway */
	if (ss_kick)
		KICK(); /* KICK:calloc */
	return p;
}

void *
realloc(void *old, size_t size)
{
	void *p = ss_take(size, 0);

	if (p && old)
		memcpy(p, old, ss_size(old) < size ? ss_size(old) : size);
	if (ss_kick)
		KICK(); /* KICK:realloc */
	return p;
}

void
free(void *p)
{
	(void)p;
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
	return p ? ss_size(p) : 0;
}
