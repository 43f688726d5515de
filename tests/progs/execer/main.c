/*
 * main.c - execer: usage `execer exec PROGRAM [ARGS...]` or `execer leak`.
 * exec: before_leak() keeps 4 blocks of 100 bytes, before_temp() allocates 300 bytes and
 * frees them, then the program execs PROGRAM with ARGS (argv[0] is PROGRAM): 5 mallocs and
 * 1 free in all, 400 bytes in 4 blocks live when its image ends. leak: after_leak() keeps 6
 * blocks of 40 bytes, "execer: leaked 6 blocks" on stdout, exit status 3. No stdio: the
 * C library allocates nothing of its own.
 */
#include <string.h>
#include <unistd.h>
#include "../common/sink.h"

void before_leak(void);
void before_temp(void);
void after_leak(void);

int
main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "exec") == 0) {
		before_leak(); /* CALL:before_leak */
		before_temp();
		execv(argv[2], argv + 2);
		say(2, "execer: exec failed\n");
		return 127;
	}
	if (argc > 1 && strcmp(argv[1], "leak") == 0) {
		after_leak(); /* CALL:after_leak */
		say(1, "execer: leaked 6 blocks\n");
		return 3;
	}
	say(2, "usage: execer exec PROGRAM [ARGS...] | execer leak\n");
	return 2;
}
