/* testfault.h - the tests' way to make jmptrace fault, or dawdle, at a chosen point: for its way out (emerg.c) and its slow paths to be tested. */
#ifndef JT_TESTFAULT_H
#define JT_TESTFAULT_H

/*
 * With JMPTRACE_TEST_FAULT=WHERE:N in the environment (read once by
 * testfault_init), the Nth call of testfault_point(WHERE) stores to an
 * address near 0: a real SIGSEGV. WHERE is one of the names passed at the
 * call sites: "stop" (a breakpoint stop being handled, the lock held),
 * "snapshot" (a snapshot being made), "write" (the writer thread with an
 * output's temporary file open). Costs one comparison when it is not set.
 * A test hook, not an option: no user chooses to crash jmptrace.
 */
void testfault_init(void);
void testfault_point(const char *where);

/*
 * With JMPTRACE_TEST_SLOW=WHERE:MS, every call of testfault_slow(WHERE)
 * sleeps MS milliseconds: "snapshot" (a snapshot being taken, the tracer
 * lock held: as a leak check of a big heap takes), "writers" (its writers
 * at work, beside the tracing for --interval's: as a big program's take).
 * A test hook too.
 */
void testfault_slow(const char *where);

#endif
