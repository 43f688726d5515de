/* wrap.h - the allocator's wrappers: functions that only pass an allocation on, skipped when a report names the code that allocated. */
#ifndef JT_WRAP_H
#define JT_WRAP_H

#include <stddef.h>

struct jt_frame;
struct jt_wrap;

/* Longest pattern wrap_add takes. */
#define WRAP_PATTERN_MAX 255

/*
 * Returns a set holding the built-in wrappers (the C library's strdup
 * family, xmalloc and its kin, glib's g_malloc and g_slice, python's
 * PyMem_ and PyObject_ allocators, redis's zmalloc, OpenSSL's CRYPTO_malloc,
 * perl's safesysmalloc, the C++ standard library); never NULL.
 */
struct jt_wrap *wrap_new(void);
void wrap_free(struct jt_wrap *w);

/*
 * Adds pattern (--alloc-fn): a function name, where '*' stands for any
 * run of characters, '?' for one and [...] for one of a set (fnmatch).
 * Returns 0, or -1 with why (at most len bytes) filled in for an empty,
 * too long or blank-holding pattern, or one that would match every name.
 * w may be NULL to check a pattern only.
 */
int wrap_add(struct jt_wrap *w, const char *pattern, char *why, size_t len);

/* 1 when frame fr is a wrapper's: its full function name or its short C++ form (cxxname.h) matches a built-in pattern or one of w's (NULL: none). */
int wrap_match(const struct jt_wrap *w, const struct jt_frame *fr);

#endif
