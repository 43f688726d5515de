/* wrap.c - the allocator's wrappers (built in and --alloc-fn), matched against a frame's function name. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxxname.h"
#include "sym.h"
#include "util.h"
#include "wrap.h"

struct jt_wrap {
	char **pat;		/* the user's patterns (--alloc-fn), owned */
	size_t n;
};

/*
 * The built-in wrappers: the allocator's own names (a frame of one is a
 * wrapper's inline copy, or a preloaded tracer's) and functions that take
 * a size and hand it on to the allocator, so that the row of a stack is named by their caller, as
 * valgrind's massif does with its --alloc-fn list. The C library's own
 * copies (strdup...), the "x" family of GNU programs and gnulib, glib,
 * and the allocators of three runtimes jmptrace is used on: CPython's
 * PyMem_/PyObject_ layers, redis's zmalloc.c, OpenSSL's CRYPTO_malloc
 * family (which redis links), perl's safesys*; then the whole C++
 * standard library (std::, __gnu_cxx::: allocators, containers, strings),
 * whose caller is the code that used the container. C++ names are matched
 * in their short form (cxxname.h), std::vector::_M_realloc_insert.
 */
static const char *const wrap_builtin[] = {
	/* The allocator's own names, as massif's list: the loader's inline malloc (rtld-malloc.h), a tracer's preload. */
	"malloc", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign", "aligned_alloc",
	"valloc", "pvalloc", "operator new*",
	"strdup", "__strdup", "strndup", "__strndup",
	"xmalloc", "xcalloc", "xzalloc", "xrealloc", "xreallocarray", "xnmalloc", "xnrealloc",
	"x2realloc", "x2nrealloc", "xcharalloc", "xmallocz", "xstrdup", "xstrndup", "xmemdup", "ximemdup",
	"g_malloc", "g_malloc0", "g_malloc_n", "g_malloc0_n", "g_realloc", "g_realloc_n",
	"g_try_malloc*", "g_try_realloc*", "g_slice_alloc", "g_slice_alloc0", "g_slice_copy",
	"g_memdup", "g_memdup2", "g_strdup", "g_strndup", "g_aligned_alloc*",
	"PyMem_*", "_PyMem_*", "PyObject_Malloc", "PyObject_Calloc", "PyObject_Realloc",
	"_PyObject_Malloc", "_PyObject_Calloc", "_PyObject_Realloc", "pymalloc_*",
	"arena_map_*", "new_arena", "allocate_from_new_pool", "_PyObject_New", "_PyObject_NewVar",
	"_PyObject_MallocWithType", "_PyObject_GC_Malloc", "gc_alloc", "_PyObject_GC_New",
	"_PyObject_GC_NewVar", "PyObject_GC_New*", "_PyType_AllocNoTrack", "PyType_GenericAlloc",
	"zmalloc", "zcalloc", "zrealloc", "zmalloc_*", "zcalloc_*", "zrealloc_*", "ztry*",
	"zstrdup",
	"CRYPTO_malloc", "CRYPTO_zalloc", "CRYPTO_realloc", "CRYPTO_clear_realloc", "CRYPTO_strdup",
	"CRYPTO_strndup", "CRYPTO_memdup",
	"Perl_safesysmalloc", "Perl_safesyscalloc", "Perl_safesysrealloc", "Perl_safesysfree",
	"std::*", "__gnu_cxx::*", "__cxa_allocate_exception",
};

struct jt_wrap *
wrap_new(void)
{
	return xcalloc(1, sizeof(struct jt_wrap));
}

void
wrap_free(struct jt_wrap *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->pat[i]);
	free(w->pat);
	free(w);
}

/* 1 when pattern would match every name: only '*' (a row would never be named by its caller). */
static int
wrap_matches_all(const char *pattern)
{
	return pattern[strspn(pattern, "*")] == '\0';
}

int
wrap_add(struct jt_wrap *w, const char *pattern, char *why, size_t len)
{
	size_t n = strlen(pattern);

	if (n == 0 || n > WRAP_PATTERN_MAX) {
		snprintf(why, len, "give a function name or pattern of 1 to %d characters", WRAP_PATTERN_MAX);
		return -1;
	}
	for (const char *p = pattern; *p; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p)) {
			snprintf(why, len, "a function name has no blanks or control characters");
			return -1;
		}
	if (wrap_matches_all(pattern)) {
		snprintf(why, len, "it would match every function: give a name, with * for any characters");
		return -1;
	}
	if (!w)
		return 0;
	w->pat = xrealloc(w->pat, (w->n + 1) * sizeof(*w->pat));
	w->pat[w->n++] = xstrdup(pattern);
	return 0;
}

/* 1 when name matches one of the n patterns pat. */
static int
wrap_any(const char *const *pat, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(pat[i], name, 0) == 0)
			return 1;
	return 0;
}

/* 1 when name is a wrapper's, by the built-in list or w's. */
static int
wrap_name(const struct jt_wrap *w, const char *name)
{
	return wrap_any(wrap_builtin, ARRAY_SIZE(wrap_builtin), name)
		|| (w && wrap_any((const char *const *)w->pat, w->n, name));
}

int
wrap_match(const struct jt_wrap *w, const struct jt_frame *fr)
{
	char brief[512];

	if (!fr->function || fr->signal_frame)
		return 0;
	if (wrap_name(w, fr->function))
		return 1;
	/* A C++ name matches in its short form too (std::vector::_M_realloc_insert), whatever --full-names says. */
	if (cxxname_short(fr->function, brief, sizeof(brief)) >= sizeof(brief))
		return 0;
	return strcmp(brief, fr->function) != 0 && wrap_name(w, brief);
}
