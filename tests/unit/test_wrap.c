/* test_wrap.c - unit tests for the allocator's wrappers: the built-in names, --alloc-fn's patterns and their checks. */
#include <stdio.h>
#include <string.h>

#include "sym.h"
#include "tap.h"
#include "wrap.h"

/* Whether a frame of function (short form name) is a wrapper's in w. */
static void
frame(const struct jt_wrap *w, const char *function, const char *name, int want)
{
	struct jt_frame fr = { .address = 0x10, .function = function, .name = name ? name : function };

	ok(wrap_match(w, &fr) == want, "'%s'%s%s %s a wrapper", function ? function : "(null)", name ? " / " : "",
	   name ? name : "", want ? "is" : "is not");
}

static void
test_builtin(void)
{
	struct jt_wrap *w = wrap_new();

	frame(w, "xmalloc", NULL, 1);
	frame(w, "xstrdup", NULL, 1);
	frame(w, "__strdup", NULL, 1);
	frame(w, "_PyObject_Malloc", NULL, 1);
	frame(w, "PyMem_RawMalloc", NULL, 1);
	frame(w, "ztrymalloc_usable_internal", NULL, 1);
	frame(w, "zmalloc", NULL, 1);
	frame(w, "Perl_safesysmalloc", NULL, 1);
	frame(w, "g_malloc0", NULL, 1);
	frame(w, "g_slice_alloc", NULL, 1);
	frame(w, "calloc", NULL, 1);
	frame(w, "arena_map_get", NULL, 1);
	frame(w, "operator new(unsigned long)", "operator new", 1);
	/* C++: the standard library, by the full name or its short form (whatever name says: --full-names). */
	frame(w, "std::__new_allocator<int>::allocate(unsigned long, void const*)", "std::__new_allocator::allocate", 1);
	frame(w, "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, "
	      "std::vector<int, std::allocator<int> > >, int const&)", NULL, 1);
	frame(w, "std::vector<int, std::allocator<int> >::push_back(int const&)", "std::vector::push_back", 1);
	frame(w, "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)", NULL, 1);
	/* The code that allocates is no wrapper, nor a frame without a name. */
	frame(w, "main", NULL, 0);
	frame(w, "xmalloc_stats", NULL, 0);
	frame(w, "my_xmalloc", NULL, 0);
	frame(w, "cache::Store::put(std::string const&)", "cache::Store::put", 0);
	frame(w, "void mystd::vector<int>::grow<int>(int)", NULL, 0);
	frame(w, NULL, NULL, 0);
	frame(NULL, "xmalloc", NULL, 1);
	wrap_free(w);
}

static void
test_added(void)
{
	struct jt_wrap *w = wrap_new();
	char why[200];

	ok(wrap_add(w, "cw_alloc", why, sizeof(why)) == 0, "a name is taken");
	ok(wrap_add(w, "pool_*_get", why, sizeof(why)) == 0, "a pattern is taken");
	frame(w, "cw_alloc", NULL, 1);
	frame(w, "cw_alloc2", NULL, 0);
	frame(w, "pool_small_get", NULL, 1);
	frame(w, "pool_get", NULL, 0);
	ok(wrap_add(w, "", why, sizeof(why)) < 0 && strstr(why, "1 to 255"), "an empty pattern is refused (%s)", why);
	ok(wrap_add(w, "***", why, sizeof(why)) < 0 && strstr(why, "every function"), "'***' is refused (%s)", why);
	ok(wrap_add(w, "a b", why, sizeof(why)) < 0 && strstr(why, "blanks"), "a blank is refused (%s)", why);
	ok(wrap_add(NULL, "ok_name", why, sizeof(why)) == 0, "a pattern checked without a set");
	frame(w, "ok_name", NULL, 0);
	wrap_free(w);
}

int
main(void)
{
	test_builtin();
	test_added();
	return tap_done();
}
