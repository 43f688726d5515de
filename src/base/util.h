/* util.h - allocation wrappers that never return NULL, and the one family of message helpers. */
#ifndef JT_UTIL_H
#define JT_UTIL_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/*
 * Allocators that never return NULL, so callers never check: on exhaustion
 * they call the function util_on_oom gave (which must not return: main.c's
 * lets the traced processes go and exits), or print one line and abort().
 */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
void util_on_oom(void (*fn)(size_t n));

/*
 * strerror(err), and for ENOMEM under an address-space limit of jmptrace's
 * own (ulimit -v) that limit, since it, not the machine or the kernel, is
 * then the likely cause. A thread's own buffer, valid until its next call.
 */
const char *util_strerror(int err);

/*
 * Fills set with every signal but those a thread raises for itself (the
 * faults SIGSEGV, SIGBUS, SIGFPE, SIGILL, and SIGABRT, SIGTRAP): what a
 * helper thread blocks so that the main thread takes the signals sent to
 * jmptrace, while a fault there still reaches its handler (blocked, the
 * kernel would kill jmptrace at once).
 */
void util_sigset_async(sigset_t *set);

/*
 * Starts fn(arg) on a helper thread of jmptrace's: in SCHED_OTHER (the
 * caller may be idle-class; one that may not leave it gives its class),
 * on cpus when not NULL (the caller may be placed on one CPU), with the
 * signals of util_sigset_async blocked; detached when asked, else *t is
 * for pthread_join. Returns 0 or an errno.
 */
int util_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const cpu_set_t *cpus, int detached);

/*
 * Ends jmptrace by sig with its default action (a core dump where that is
 * the action), raised in the calling thread; async-signal-safe.
 */
void util_die_by_signal(int sig) __attribute__((noreturn));

/* Messages go to stderr prefixed with "jmptrace: ". perror_msg appends strerror(errno). */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void perror_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void debug_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The line after a usage error's own line, as getopt-based tools (strace,
 * coreutils) print it: "Try 'CMD --help' for more information."
 */
void try_help_msg(const char *cmd);

/* Non-zero with -v/--verbose (set once by main.c): debug_msg prints. */
extern int jt_debug;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * A function's precondition ("the lock held", "tracer thread 0 only"),
 * checked in the debug build (-DJT_DEBUG, make check's sanitizer variant).
 * Not in a user's build: an abort there would leave trap bytes in an
 * attached process, which is worse than the broken precondition.
 */
#ifdef JT_DEBUG
#include <assert.h>
#define DEBUG_ASSERT(cond) assert(cond)
#else
#define DEBUG_ASSERT(cond) ((void)0)
#endif

/*
 * Writes v in decimal with a comma between groups of three digits
 * ("1,234,567"), as valgrind prints figures, into buf (27 bytes suffice).
 * Returns buf.
 */
char *util_num(char *buf, uint64_t v);

/*
 * Turns len bytes of NUL-separated arguments in buf (as /proc/PID/cmdline
 * holds them, the last NUL optional) into one line as ps shows it, in
 * place: blanks between them, a control character as '?'. buf must have
 * room for len + 1 bytes. Returns buf.
 */
char *util_args_line(char *buf, size_t len);

/* The command line argv as util_args_line writes it, malloc'ed. */
char *util_argv_line(char *const argv[]);

/*
 * The tracer's one clock: intervals, durations, pauses, the due-snapshot
 * timer and timed waits are read or set on it, and the uprobe source asks
 * perf to stamp its samples with it, so that an event's time and now compare.
 */
#define UTIL_CLOCK CLOCK_MONOTONIC

/* Nanoseconds of UTIL_CLOCK: to compare with the uprobe source's sample times. */
uint64_t util_now_ns(void);
/* Microseconds of UTIL_CLOCK. */
uint64_t util_now_us(void);
/* Milliseconds of UTIL_CLOCK. */
uint64_t util_now_ms(void);
/*
 * Milliseconds of UTIL_CLOCK as of the kernel's last tick (its _COARSE
 * variant): no system call, a few nanoseconds, for a stamp on every
 * allocation; never ahead of util_now_ms, behind it by a tick at most.
 */
uint64_t util_coarse_ms(void);
/* Nanoseconds since the Epoch (CLOCK_REALTIME): a date for a report to carry, never an interval. */
uint64_t util_wall_ns(void);

/* n rounded up to a power of two of pages (at least one page). */
uint64_t util_pow2_pages(uint64_t n);

/*
 * The length of the well-formed UTF-8 sequence at p (2 to 4), or 0: an
 * ASCII byte, a stray or truncated sequence, an overlong form, a surrogate
 * or a code point past U+10FFFF (which JSON and XML parsers reject).
 */
int util_utf8_len(const unsigned char *p);

#endif
