/* cxxname.h - short C++ function names for people: template arguments, parameter lists and return types elided. */
#ifndef JT_CXXNAME_H
#define JT_CXXNAME_H

#include <stddef.h>

/*
 * Writes the short form of the demangled name into out (len bytes, always
 * NUL-terminated) and returns its length. Template arguments, parameter
 * lists with their qualifiers, return types and ABI tags go, as pprof and
 * heaptrack elide them:
 *     void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(...)
 *         -> std::vector::_M_realloc_insert
 * Operator names ("operator new", "operator<<", "operator()"), lambdas and
 * other {...} entities ("{lambda(int)#1}", template arguments inside them
 * elided) and "(anonymous namespace)" stay. A C name comes out as it is;
 * so does a name that would come out empty. The short form is never longer
 * than name, so strlen(name) + 1 bytes always hold it whole.
 */
size_t cxxname_short(const char *name, char *out, size_t len);

#endif
