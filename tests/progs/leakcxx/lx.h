// lx.h - leakcxx: blocks reachable only through memcheck's interior-pointer heuristics.
// Built with -D_GLIBCXX_USE_CXX11_ABI=0 (tests/progs/Makefile): std::string is then the
// copy-on-write representation (length, capacity, refcount, then the characters).
#ifndef JT_PROGS_LX_H
#define JT_PROGS_LX_H

#include <cstddef>

#define LX_STRING_LEN 40	// stdstring: the rep is 3 words + 40 chars + NUL = 65 bytes
#define LX_STRING_SIZE (3 * 8 + LX_STRING_LEN + 1)
#define LX_NELEM 3		// newarray: 8 bytes of count + 3 elements of 16 = 56 bytes
#define LX_ARRAY_SIZE (8 + LX_NELEM * 16)
#define LX_MULTI_SIZE 40	// multipleinheritance: LxA (vptr, a), LxB (vptr, b), c
#define LX_LENGTH64_SIZE 96	// length64: the first word is the length of the rest, 88

// An element with a destructor, so that new[] stores the count before the elements.
struct LxElem {
	long v[2];
	~LxElem();
};

struct LxA {
	long a = 1;
	virtual ~LxA();
};

struct LxB {
	long b = 2;
	virtual ~LxB();
};

struct LxC : LxA, LxB {
	long c = 3;
	~LxC() override;
};

extern LxElem *volatile lx_array;
extern LxB *volatile lx_second;
extern char *volatile lx_sized;

void lx_string();
void lx_newarray();
void lx_multi();
void lx_length64();
int lx_throw();

#endif
