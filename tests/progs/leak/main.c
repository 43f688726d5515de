/*
 * main.c - leak: usage `leak [N [STATUS]]` (defaults 10 and 3).
 * Leaks N blocks from leak_here() and one from leak_small(), mallocs and frees N blocks in
 * churn(), prints one fixed line to stdout and exits with STATUS. A constructor and an atexit
 * handler leak one block each (ctor.c), before main and after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include "leak.h"

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	int status = argc > 2 ? atoi(argv[2]) : 3;

	leak_here(n); /* CALL-LEAK */
	leak_small();
	churn(n);
	printf("leak: leaked %d blocks\n", n);
	return status;
}
