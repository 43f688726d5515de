/* test_cxxname.c - unit tests for cxxname_short: real demangled libstdc++ and program names, and what each must come out as. */
#include <stdio.h>
#include <string.h>

#include "cxxname.h"
#include "tap.h"
#include "util.h"

/* Names as c++filt (__cxa_demangle) writes them, taken from libstdc++.so.6 and from programs built with g++ 12. */
static const struct {
	const char *full, *want;
} cases[] = {
	/* The example: return type, template arguments and parameters go. */
	{ "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
	  "std::vector::_M_realloc_insert" },
	{ "int& std::vector<int, std::allocator<int> >::emplace_back<int>(int&&)", "std::vector::emplace_back" },
	{ "void std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*, std::forward_iterator_tag)",
	  "std::__cxx11::basic_string::_M_construct" },
	/* Nested templates, a policy given as a cast expression. */
	{ "std::_Sp_counted_ptr_inplace<std::vector<int, std::allocator<int> >, std::allocator<void>, (__gnu_cxx::_Lock_policy)2>::_M_dispose()",
	  "std::_Sp_counted_ptr_inplace::_M_dispose" },
	{ "std::_Hashtable<int, std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, std::allocator<std::pair<int const, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > > >, std::__detail::_Select1st, std::equal_to<int>, std::hash<int>, std::__detail::_Mod_range_hashing, std::__detail::_Default_ranged_hash, std::__detail::_Prime_rehash_policy, std::__detail::_Hashtable_traits<false, false, true> >::_M_find_node(unsigned long, int const&, unsigned long) const",
	  "std::_Hashtable::_M_find_node" },
	/* Operators. */
	{ "operator new(unsigned long)", "operator new" },
	{ "operator new[](unsigned long, std::nothrow_t const&)", "operator new[]" },
	{ "operator delete(void*, unsigned long, std::align_val_t)", "operator delete" },
	{ "operator delete[](void*)", "operator delete[]" },
	{ "std::ostream::operator<<(std::ostream& (*)(std::ostream&))", "std::ostream::operator<<" },
	{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*)",
	  "std::operator<<" },
	{ "std::istream::operator>>(std::basic_ios<char, std::char_traits<char> >& (*)(std::basic_ios<char, std::char_traits<char> >&))",
	  "std::istream::operator>>" },
	{ "S::operator<(S const&) const", "S::operator<" },
	{ "bool std::operator< <char, std::char_traits<char>, std::allocator<char> >(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, char const*)",
	  "std::operator<" },
	{ "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >::difference_type __gnu_cxx::operator-<int*, std::vector<int, std::allocator<int> > >(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&, __gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > > const&)",
	  "__gnu_cxx::operator-" },
	{ "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >::operator->() const", "__gnu_cxx::__normal_iterator::operator->" },
	{ "std::vector<int, std::allocator<int> >::operator[](unsigned long)", "std::vector::operator[]" },
	{ "std::hash<int>::operator()(int) const", "std::hash::operator()" },
	{ "std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >::operator=(std::__cxx11::basic_string<wchar_t, std::char_traits<wchar_t>, std::allocator<wchar_t> >&&)",
	  "std::__cxx11::basic_string::operator=" },
	{ "S::operator bool() const", "S::operator bool" },
	{ "std::unique_ptr<int, std::default_delete<int> >::operator std::__shared_ptr<int, (__gnu_cxx::_Lock_policy)2>() const",
	  "std::unique_ptr::operator std::__shared_ptr" },
	/* Function pointers in parameters. */
	{ "apply(int (*)(int, char const*), int)", "apply" },
	{ "__gnu_cxx::__pool<true>::_M_initialize(void (*)(void*))", "__gnu_cxx::__pool::_M_initialize" },
	/* (anonymous namespace) stays. */
	{ "(anonymous namespace)::make(int)", "(anonymous namespace)::make" },
	{ "(anonymous namespace)::Widget::Widget(int)", "(anonymous namespace)::Widget::Widget" },
	{ "std::vector<(anonymous namespace)::Widget*, std::allocator<(anonymous namespace)::Widget*> >::_M_check_len(unsigned long, char const*) const",
	  "std::vector::_M_check_len" },
	/* Lambdas and the code that calls them. */
	{ "main::{lambda(int)#1}::operator()(int) const", "main::{lambda(int)#1}::operator()" },
	{ "main::{lambda()#2}::operator()() const", "main::{lambda()#2}::operator()" },
	{ "std::_Function_handler<int* (int), main::{lambda(int)#1}>::_M_invoke(std::_Any_data const&, int&&)",
	  "std::_Function_handler::_M_invoke" },
	{ "std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#2}> > >::_M_run()", "std::thread::_State_impl::_M_run" },
	{ "void std::__invoke_impl<void, main::{lambda()#2}>(std::__invoke_other, main::{lambda()#2}&&)", "std::__invoke_impl" },
	{ "main::{lambda(int)#1}& std::_Any_data::_M_access<main::{lambda(int)#1}>()", "std::_Any_data::_M_access" },
	{ "main::{lambda(std::vector<int, std::allocator<int> > const&)#3}::operator()(std::vector<int, std::allocator<int> > const&) const",
	  "main::{lambda(std::vector const&)#3}::operator()" },
	{ "std::thread::thread<main::{lambda()#2}, , void>(main::{lambda()#2}&&)", "std::thread::thread" },
	/* const, & and && qualifiers. */
	{ "S::f() const &", "S::f" },
	{ "std::__cxx11::basic_stringbuf<char, std::char_traits<char>, std::allocator<char> >::str() &&", "std::__cxx11::basic_stringbuf::str" },
	{ "std::_Vector_base<int, std::allocator<int> >::_M_get_Tp_allocator() const", "std::_Vector_base::_M_get_Tp_allocator" },
	/* decltype in a return type. */
	{ "decltype ({parm#1}+{parm#2}) add<int, double>(int, double)", "add" },
	{ "decltype (({parm#1}.size)()) size<std::vector<int, std::allocator<int> > >(std::vector<int, std::allocator<int> > const&)", "size" },
	/* Local classes and statics: a parameter list followed by "::". */
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*, std::forward_iterator_tag)::_Guard::~_Guard()",
	  "std::__cxx11::basic_string::_M_construct::_Guard::~_Guard" },
	{ "std::_Sp_make_shared_tag::_S_ti()::__tag", "std::_Sp_make_shared_tag::_S_ti::__tag" },
	{ "A::f() const::Local::g()", "A::f::Local::g" },
	/* ABI tags, clones and destructors. */
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > to_name[abi:cxx11]<int>(int)", "to_name" },
	{ "Shape::area() const [clone .cold]", "Shape::area" },
	{ "std::_Sp_counted_base<(__gnu_cxx::_Lock_policy)2>::~_Sp_counted_base()", "std::_Sp_counted_base::~_Sp_counted_base" },
	/* C names, and what a scan must leave whole. */
	{ "main", "main" },
	{ "__libc_start_call_main", "__libc_start_call_main" },
	{ "my_operator_table", "my_operator_table" },
	{ "leak_here.constprop.0", "leak_here.constprop.0" },
	{ "cx_vector_leak()", "cx_vector_leak" },
	/* A function returning a function pointer has nothing left to show but its whole name. */
	{ "void (*signal_of<int>(int))(int)", "void (*signal_of<int>(int))(int)" },
	{ "", "" },
};

static void
test_cases(void)
{
	char out[1024];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t n = cxxname_short(cases[i].full, out, sizeof(out));

		ok(strcmp(out, cases[i].want) == 0 && n == strlen(out) && n <= strlen(cases[i].full),
		   "%s -> %s (got %s)", cases[i].full, cases[i].want, out);
	}
}

/* A buffer too small for the short name cuts it, NUL-terminated; one of strlen(name) + 1 bytes never does. */
static void
test_sizes(void)
{
	char small[8], fit[sizeof("operator new(unsigned long)")];

	is_u64(cxxname_short("std::vector<int>::push_back(int const&)", small, sizeof(small)), 7, "cut at 7 characters");
	ok(strcmp(small, "std::ve") == 0, "the cut name is NUL-terminated (got %s)", small);
	cxxname_short("operator new(unsigned long)", fit, sizeof(fit));
	ok(strcmp(fit, "operator new") == 0, "strlen(name) + 1 bytes hold it (got %s)", fit);
	is_u64(cxxname_short("main", small, 0), 0, "no room: nothing written");
}

int
main(void)
{
	test_cases();
	test_sizes();
	return tap_done();
}
