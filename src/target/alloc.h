/* alloc.h - the allocator functions jmptrace traces: symbol names, report names and argument rules. */
#ifndef JT_ALLOC_H
#define JT_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* How a traced function behaves, which decides what its entry and return mean. */
enum jt_fn_kind {
	FK_ALLOC,	/* returns a new block of `size` bytes (malloc, new, valloc...) */
	FK_CALLOC,	/* returns n * size zeroed bytes */
	FK_REALLOC,	/* moves/resizes arg_ptr to size bytes */
	FK_MEMALIGN_PTR,/* posix_memalign: stores the block through a pointer, returns 0 */
	FK_FREE,	/* releases its first argument */
	FK_UNWIND,	/* a C++ unwinder entry: hijacked returns must be put back first */
	FK_RTLD,	/* the dynamic linker's rendezvous: the link map changed */
	FK_EXIT,	/* _exit: the process ends with its memory intact (--leak-check only) */
	FK_MMAP,	/* --pages: mmap(addr, len, prot, flags, fd, off) returns the mapping */
	FK_MUNMAP,	/* --pages: munmap(addr, len) */
	FK_MREMAP,	/* --pages: mremap(old, old_len, new_len, flags, ...) returns where it went */
	FK_SBRK,	/* --pages: sbrk(incr) returns the old break */
	FK_BRK,		/* --pages: brk(addr) returns 0 once the break is addr */
};

struct jt_fn_desc {
	const char *symbol;	/* ELF symbol name */
	const char *name;	/* name in reports and in the JSON "calls" object */
	enum jt_fn_kind kind;
	uint8_t size_arg;	/* argument index (0-based) holding the size */
	uint8_t size_arg2;	/* second factor (calloc, reallocarray), or 0xff */
	uint8_t ptr_arg;	/* argument holding the old block / out pointer, or 0xff */
};

/* Indexes into alloc_fns[]; the order is the order of the report's call counts. */
enum jt_fn {
	FN_MALLOC, FN_CALLOC, FN_REALLOC, FN_REALLOCARRAY, FN_POSIX_MEMALIGN,
	FN_ALIGNED_ALLOC, FN_MEMALIGN, FN_VALLOC, FN_PVALLOC,
	FN_NEW, FN_NEW_ARR, FN_NEW_NT, FN_NEW_ARR_NT,
	FN_NEW_AL, FN_NEW_ARR_AL, FN_NEW_AL_NT, FN_NEW_ARR_AL_NT,
	FN_FREE,
	FN_DEL, FN_DEL_ARR, FN_DEL_SZ, FN_DEL_ARR_SZ, FN_DEL_NT, FN_DEL_ARR_NT,
	FN_DEL_AL, FN_DEL_ARR_AL, FN_DEL_SZ_AL, FN_DEL_ARR_SZ_AL, FN_DEL_AL_NT, FN_DEL_ARR_AL_NT,
	FN_REPORTED,	/* functions below are traced but not reported as calls */
	FN_UNWIND_RAISE = FN_REPORTED, FN_UNWIND_RETHROW, FN_UNWIND_FORCED,
	FN_EXIT,		/* a breakpoint only under --leak-check */
	FN_MMAP, FN_MUNMAP, FN_MREMAP, FN_SBRK, FN_BRK,	/* breakpoints only under --pages */
	FN_DL_DEBUG_STATE,	/* looked up in the dynamic linker only */
	FN_COUNT
};

/*
 * Functions named by --alloc and --alloc-preset come after FN_COUNT, in the
 * order given, up to alloc_fn_end(): they are reported as calls, after the
 * standard ones, under the names given.
 */
#define ALLOC_NAMED_MAX 64
#define FN_MAX (FN_COUNT + ALLOC_NAMED_MAX)

/* Filled at option parsing (alloc_named_add), read-only once tracing starts. */
extern struct jt_fn_desc alloc_fns[FN_MAX];

/* One past the last traced function: FN_COUNT plus the named ones. */
int alloc_fn_end(void);

/*
 * --alloc NAME=KIND[:ARG]: traces the function NAME as one of the standard
 * kinds (malloc, calloc, realloc, free, free_sized, memalign, aligned_alloc,
 * posix_memalign), whose arguments start at the ARG-th (1-based, default 1)
 * instead of the first. With dlopen set (--alloc-dlopen), NAME may come
 * from a library loaded later: only its absence at the end is an error.
 * Returns 0, or -1 with why (a clause) in why.
 */
int alloc_named_add(const char *spec, int dlopen, char *why, size_t len);

/* The option that named a function: a missing one is an error at the start, at the end only, or never. */
enum alloc_named_by { ALLOC_BY_OPTION, ALLOC_BY_DLOPEN, ALLOC_BY_PRESET };

/* --alloc-preset NAME: the functions of a prefixed allocator build. Returns 0, or -1 for an unknown NAME. */
int alloc_preset_add(const char *name);
/* The presets' names, as a comma list for messages. */
#define ALLOC_PRESET_NAMES "jemalloc-je, mimalloc or tcmalloc"
#define ALLOC_NPRESETS 3
/* Preset i's name, and the function whose definition says a program has that allocator. */
const char *alloc_preset_name(int i);
const char *alloc_preset_key(int i);
/* Non-zero when preset i was asked for. */
int alloc_preset_used(int i);

/* Named function fn was found in a module of a traced image. */
void alloc_named_found(int fn);
/*
 * The first function named by --alloc never found so far, or -1; unless
 * at_start, by --alloc-dlopen too (a preset's may always be missing).
 */
int alloc_named_missing(int at_start);
/* The option that named fn, for messages: "--alloc", "--alloc-dlopen" or "--alloc-preset". */
const char *alloc_named_option(int fn);

/* A traced function jmptrace could not put its breakpoint on, and why; every report lists it. */
struct jt_untraced {
	enum jt_fn fn;
	uint64_t addr;		/* its entry in the process */
	char *module;		/* the file that defines it, as in /proc/PID/maps */
	char *reason;		/* why, as a clause: "its entry already holds a breakpoint ..." */
	uint64_t missed_until_ms;	/* 0: no call is counted; else calls are counted again since then (heap clock),
					   its breakpoint moved after the kernel took it: only earlier ones may be missing */
};

/* Non-zero when fn's calls are listed in reports: a standard allocator function or a named one. */
static inline int
alloc_fn_reported(int fn)
{
	return fn < FN_REPORTED || (fn >= FN_COUNT && fn < alloc_fn_end());
}

/* Non-zero when the function releases a block: its calls are frees, not allocation calls. */
static inline int
alloc_fn_is_free(enum jt_fn fn)
{
	return alloc_fns[fn].kind == FK_FREE;
}

/*
 * Non-zero when fn is a free named by --alloc or a preset: it is followed to
 * its return, as an allocation is, so that the standard frees it makes
 * (sqlite3_free(p) calls free(p - 8)) are nested in it, its own business.
 */
static inline int
alloc_fn_free_held(int fn)
{
	return fn >= FN_COUNT && alloc_fns[fn].kind == FK_FREE;
}

/* Non-zero when fn maps or unmaps pages (--pages): its calls change the page table, not the heap. */
static inline int
alloc_fn_is_pages(enum jt_fn fn)
{
	return fn >= FN_MMAP && fn <= FN_BRK;
}

/* Bit n set for each argument n the entry handler of fn reads (its size, second factor and pointer). */
static inline unsigned
alloc_fn_args(enum jt_fn fn)
{
	const struct jt_fn_desc *d = &alloc_fns[fn];
	unsigned args = 0;

	if (d->size_arg != 0xff)
		args |= 1u << d->size_arg;
	if (d->size_arg2 != 0xff)
		args |= 1u << d->size_arg2;
	if (d->ptr_arg != 0xff)
		args |= 1u << d->ptr_arg;
	/* --pages: mremap's old length and mmap's and mremap's flags too (record_pages_fill). */
	if (alloc_fn_is_pages(fn))
		args |= 0xf;
	return args;
}

#endif
