/*
 * main.c - spawner: usage `spawner HEARTBEAT`. Starts helpers in a loop, one kind after the
 * other: posix_spawn of itself (`spawner -child 3`), vfork + execv of itself (`spawner -child
 * 4`), and fork whose child allocates and exits 5. It waits for each and checks its exit
 * status; a helper that died of a signal or exited otherwise prints
 * "HARMED <kind> signal N" (or "status N") on stdout. A signal the parent should never get
 * (SIGTRAP, SIGSEGV...) prints "BROKEN" and exits 99; a helper it cannot start or wait for
 * prints "BROKEN cannot start|wait for <kind>: errno N" and exits 98. After each helper the number of
 * helpers so far is written to the file HEARTBEAT, so a test can see it keep going.
 * `spawner HEARTBEAT threads`: the same loop runs in two threads at once (main waits), so
 * that a tracer with several tracer threads may trace helpers' parents from any of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../common/sink.h"

extern char **environ;

static const char *const kinds[] = { "posix_spawn", "vfork", "fork" };

static void
broken(int sig)
{
	(void)sig;
	say(1, "BROKEN\n");
	_exit(99);
}

/* What every helper does: allocate, touch and free a little, so it runs through malloc. */
__attribute__((noinline, noipa)) static void
helper_work(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		void *p = malloc(opaque_size(32 + i));

		sink(p, 32 + i);
		free(p);
	}
}

static pid_t
start_helper(int kind, char *self)
{
	char *spawn_argv[] = { self, "-child", "3", NULL };
	char *vfork_argv[] = { self, "-child", "4", NULL };
	pid_t pid;

	if (kind == 0) {
		int err = posix_spawn(&pid, self, NULL, NULL, spawn_argv, environ);

		errno = err;
		return err == 0 ? pid : -1;
	}
	if (kind == 1) {
		pid = vfork();
		if (pid == 0) {
			execv(self, vfork_argv);
			_exit(127);
		}
		return pid;
	}
	pid = fork();
	if (pid == 0) {
		/* The parent's handlers would hide a SIGTRAP: let it kill us, as untraced it never comes. */
		signal(SIGTRAP, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		helper_work(200);
		_exit(5);
	}
	return pid;
}

static void
report(int kind, int status)
{
	static const int want[] = { 3, 4, 5 };

	if (WIFEXITED(status) && WEXITSTATUS(status) == want[kind])
		return;
	say(1, "HARMED ");
	say(1, kinds[kind]);
	say(1, WIFSIGNALED(status) ? " signal " : " status ");
	say_num(1, WIFSIGNALED(status) ? (unsigned long)WTERMSIG(status) : (unsigned long)WEXITSTATUS(status));
	say(1, "\n");
}

static char *self;
static int heartbeat_fd;

static unsigned long started;

/* Starts one helper after the other and waits for each, forever. */
static void *
spawn_loop(void *arg)
{
	char buf[32];
	int fd = heartbeat_fd;

	for (;;) {
		unsigned long n = __atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
		int kind = (int)(n % 3), status;
		pid_t pid;
		size_t len = 0;

		helper_work(10);
		if ((pid = start_helper(kind, self)) < 0 || waitpid(pid, &status, 0) != pid) {
			/* Which, and errno: a restart that went wrong says EINTR, a lost child ECHILD. */
			say(1, pid < 0 ? "BROKEN cannot start " : "BROKEN cannot wait for ");
			say(1, kinds[kind]);
			say(1, ": errno ");
			say_num(1, (unsigned long)errno);
			say(1, "\n");
			_exit(98);
		}
		report(kind, status);
		/* Digits only ever grow, so an overwrite at offset 0 leaves no stale digits. */
		for (unsigned long v = n; v; v /= 10)
			len++;
		for (unsigned long v = n, i = len; i > 0; v /= 10)
			buf[--i] = (char)('0' + v % 10);
		buf[len] = '\n';
		pwrite(fd, buf, len + 1, 0);
	}
	return arg;
}

int
main(int argc, char **argv)
{
	static const int bad[] = { SIGTRAP, SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	pthread_t t;

	if (argc > 2 && strcmp(argv[1], "-child") == 0) {
		helper_work(20);
		return (int)arg_num(argv[2], 0);
	}
	if (argc < 2 || (heartbeat_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
		return 2;
	self = argv[0];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		signal(bad[i], broken);
	if (argc < 3 || strcmp(argv[2], "threads") != 0)
		return spawn_loop(NULL) != NULL;
	if (pthread_create(&t, NULL, spawn_loop, NULL) != 0 || pthread_create(&t, NULL, spawn_loop, NULL) != 0)
		return 1;
	for (;;)
		pause();
}
