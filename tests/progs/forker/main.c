/*
 * main.c - forker: usage `forker fork`, `forker spawn` or `forker exec PROGRAM [ARGS...]`.
 * fork: parent_leak() leaks one block, then the program forks; the child leaks 10 blocks
 * from child_leak() and exits 7; the parent waits, prints the child's status and exits 0.
 * The child inherits the parent's memory, breakpoints included, so it only lives if the
 * tracer deals with fork. spawn: parent_leak(), then system("exit 3") (glibc runs it with
 * posix_spawn, a vfork-like clone that shares the parent's memory until it execs), prints
 * its status and exits 0. exec: parent_leak(), then execv(PROGRAM, ARGS). `forker wait GATE`:
 * as fork, but the child waits until the file GATE exists (60 s at most) before it leaks,
 * so that a test can look at its memory meanwhile.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "../common/sink.h"

void parent_leak(void);
void child_leak(void);

int
main(int argc, char **argv)
{
	int status;
	pid_t pid;

	parent_leak();
	if (argc > 2 && strcmp(argv[1], "exec") == 0) {
		execv(argv[2], argv + 2);
		say(2, "forker: exec failed\n");
		return 127;
	}
	if (argc > 1 && strcmp(argv[1], "spawn") == 0) {
		status = system("exit 3");
		say(1, "forker: system exit ");
		say_num(1, WIFEXITED(status) ? (unsigned long)WEXITSTATUS(status) : 1000);
		say(1, "\n");
		return 0;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; argc > 2 && strcmp(argv[1], "wait") == 0 && access(argv[2], F_OK) != 0 && i < 6000; i++)
			usleep(10000);
		child_leak();
		say(1, "forker: child done\n");
		_exit(7);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	say(1, "forker: child exit ");
	say_num(1, WIFEXITED(status) ? (unsigned long)WEXITSTATUS(status) : 1000 + (unsigned long)WTERMSIG(status));
	say(1, "\n");
	return 0;
}
