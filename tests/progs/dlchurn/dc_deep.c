/*
 * dc_deep.c - DC_DEPTH distinct functions between a thread's start and dc_churn: every pc of
 * the chain is its own, so an unwinder that starts over after a change of the module set
 * (every dlopen round of dlchurn) has many rules to build again, while the set may change.
 */
#include "dlchurn.h"
#include "../common/sink.h"

/* dc_deepN calls dc_deepN+1; the sink after the call keeps the frame (no tail call). */
#define DC_STEP(n, next) \
	__attribute__((noinline, noipa)) void dc_deep##next(unsigned long k); \
	__attribute__((noinline, noipa)) void \
	dc_deep##n(unsigned long k) \
	{ \
		dc_deep##next(k); \
		sink(opaque_ptr(0), n); \
	}

DC_STEP(0, 1)
DC_STEP(1, 2)
DC_STEP(2, 3)
DC_STEP(3, 4)
DC_STEP(4, 5)
DC_STEP(5, 6)
DC_STEP(6, 7)
DC_STEP(7, 8)
DC_STEP(8, 9)
DC_STEP(9, 10)
DC_STEP(10, 11)
DC_STEP(11, 12)
DC_STEP(12, 13)
DC_STEP(13, 14)
DC_STEP(14, 15)
DC_STEP(15, 16)
DC_STEP(16, 17)
DC_STEP(17, 18)
DC_STEP(18, 19)
DC_STEP(19, 20)
DC_STEP(20, 21)
DC_STEP(21, 22)
DC_STEP(22, 23)
DC_STEP(23, 24)
DC_STEP(24, 25)
DC_STEP(25, 26)
DC_STEP(26, 27)
DC_STEP(27, 28)
DC_STEP(28, 29)
DC_STEP(29, 30)
DC_STEP(30, 31)
DC_STEP(31, 32)
DC_STEP(32, 33)
DC_STEP(33, 34)
DC_STEP(34, 35)
DC_STEP(35, 36)
DC_STEP(36, 37)
DC_STEP(37, 38)
DC_STEP(38, 39)
DC_STEP(39, 40)
DC_STEP(40, 41)
DC_STEP(41, 42)
DC_STEP(42, 43)
DC_STEP(43, 44)
DC_STEP(44, 45)
DC_STEP(45, 46)
DC_STEP(46, 47)
DC_STEP(47, 48)

__attribute__((noinline, noipa)) void
dc_deep48(unsigned long k)
{
	dc_churn(k);
	sink(opaque_ptr(0), 48);
}
