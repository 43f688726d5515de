/*
 * main.c - killsig: usage `killsig MODE` with MODE one of term, abort, segv, kill, exit.
 * Leaks one block from leak_before_death(), prints one line, then dies: raise(SIGTERM),
 * abort() (SIGABRT), a write through a null pointer (a real SIGSEGV), raise(SIGKILL), or
 * exit(42) for "exit".
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "../common/sink.h"

void leak_before_death(void);

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "term";

	leak_before_death();
	say(1, "killsig: ");
	say(1, mode);
	say(1, "\n");
	if (strcmp(mode, "term") == 0)
		raise(SIGTERM);
	else if (strcmp(mode, "abort") == 0)
		abort();
	else if (strcmp(mode, "segv") == 0)
		*(volatile int *)opaque_ptr(NULL) = 1;
	else if (strcmp(mode, "kill") == 0)
		raise(SIGKILL);
	else if (strcmp(mode, "exit") == 0)
		exit(42);
	say(2, "killsig: unknown mode\n");
	return 2;
}
