/*
 * main.c - arch32: a program for tests/arch.t to build with -m32 (it is not in the
 * Makefile's C_PROGS, which are all x86-64). Usage `arch32 STATUS [SECONDS | -]`: allocates,
 * prints "arch32: ok", sleeps SECONDS (0 by default) or with "-" reads stdin to its end (so
 * a test decides when it goes on, however slow the host), then exits with STATUS, or kills
 * itself with SIGTERM when STATUS is "TERM".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	char *p = malloc(100);

	if (argc < 2 || !p)
		return 2;
	memset(p, 1, 100);
	free(p);
	printf("arch32: ok\n");
	fflush(stdout);
	if (argc > 2 && strcmp(argv[2], "-") == 0)
		while (getchar() != EOF)
			;
	else if (argc > 2)
		sleep((unsigned)atoi(argv[2]));
	if (strcmp(argv[1], "TERM") == 0)
		raise(SIGTERM);
	return atoi(argv[1]);
}
