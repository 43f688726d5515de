/* util.c - allocation wrappers and message helpers shared by every module. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

int jt_debug;

/* What an allocation failure calls (main.c's way out), or NULL. */
static void (*util_oom_fn)(size_t n);

void
util_on_oom(void (*fn)(size_t n))
{
	util_oom_fn = fn;
}

static void *
oom(size_t n)
{
	if (util_oom_fn)
		util_oom_fn(n);	/* does not return */
	fprintf(stderr, "jmptrace: out of memory allocating %zu bytes\n", n);
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	return p ? p : oom(n);
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	return p ? p : oom(nmemb * size);
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	return q ? q : oom(n);
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);
	return p ? p : oom(strlen(s) + 1);
}

const char *
util_strerror(int err)
{
	static __thread char buf[160];
	char lim[32];
	struct rlimit rl;

	if (err != ENOMEM || getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return strerror(err);
	snprintf(buf, sizeof(buf), "%s (jmptrace's own address-space limit, ulimit -v, is %s KiB)",
		 strerror(err), util_num(lim, rl.rlim_cur / 1024));
	return buf;
}

void
util_sigset_async(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGABRT);
	sigdelset(set, SIGTRAP);
}

int
util_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, const cpu_set_t *cpus, int detached)
{
	struct sched_param sp = { 0 };
	sigset_t all, old;
	pthread_attr_t attr;
	int err;

	util_sigset_async(&all);
	pthread_attr_init(&attr);
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	if (cpus)
		pthread_attr_setaffinity_np(&attr, sizeof(*cpus), cpus);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, &attr, fn, arg);
	if (err == EPERM) {
		pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
		err = pthread_create(t, &attr, fn, arg);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return err;
}

void
util_die_by_signal(int sig)
{
	sigset_t one;

	signal(sig, SIG_DFL);
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	/* To this thread: a fault's signal must not go to another thread that blocks it. */
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	_exit(128 + sig);
}

static void
vmsg(const char *fmt, va_list ap, int err)
{
	fputs("jmptrace: ", stderr);
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, ": %s", util_strerror(err));
	fputc('\n', stderr);
}

void
error_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
}

void
perror_msg(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, err);
	va_end(ap);
}

void
debug_msg(const char *fmt, ...)
{
	va_list ap;

	if (!jt_debug)
		return;
	va_start(ap, fmt);
	vmsg(fmt, ap, 0);
	va_end(ap);
}

void
try_help_msg(const char *cmd)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", cmd);
}

char *
util_num(char *buf, uint64_t v)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%" PRIu64, v), i, o = 0;

	for (i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* Nanoseconds of clock id. */
static uint64_t
util_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

uint64_t
util_now_ns(void)
{
	return util_clock_ns(UTIL_CLOCK);
}

uint64_t
util_now_us(void)
{
	return util_clock_ns(UTIL_CLOCK) / 1000;
}

uint64_t
util_now_ms(void)
{
	return util_clock_ns(UTIL_CLOCK) / 1000000;
}

uint64_t
util_coarse_ms(void)
{
	return util_clock_ns(CLOCK_MONOTONIC_COARSE) / 1000000;
}

uint64_t
util_wall_ns(void)
{
	return util_clock_ns(CLOCK_REALTIME);
}

char *
util_args_line(char *buf, size_t len)
{
	if (len && buf[len - 1] == '\0')
		len--;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
		else if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	buf[len] = '\0';
	return buf;
}

char *
util_argv_line(char *const argv[])
{
	size_t len = 0, n;
	char *buf;

	for (int i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	buf = xmalloc(len + 1);
	len = 0;
	for (int i = 0; argv[i]; i++) {
		n = strlen(argv[i]) + 1;
		memcpy(buf + len, argv[i], n);
		len += n;
	}
	return util_args_line(buf, len);
}

uint64_t
util_pow2_pages(uint64_t n)
{
	uint64_t r = (uint64_t)sysconf(_SC_PAGESIZE);

	while (r < n)
		r <<= 1;
	return r;
}

int
util_utf8_len(const unsigned char *p)
{
	int len;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	for (int i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong 3- and 4-byte forms, surrogates and code points past U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
	    (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return len;
}
