/*
 * main.c - leakgrow: a program to attach to that loses blocks over time. Writes "ready",
 * then loses a block (gr_lose) every GR_PERIOD_MS while stdin is quiet; answers each line it
 * reads with "pong N" (N: blocks lost so far); at the end of stdin writes "bye N" and exits 0.
 * A signal ends it the default way. Only read(2), write(2) and poll(2) do I/O, so the only
 * mallocs are gr_lose's.
 */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include "gr.h"
#include "../common/sink.h"

/* Answers every newline in buf[0..n) with "pong N". */
static void
gr_answer(const char *buf, ssize_t n, unsigned long lost)
{
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] != '\n')
			continue;
		say(1, "pong ");
		say_num(1, lost);
		say(1, "\n");
	}
}

int
main(void)
{
	unsigned long lost = 0;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char buf[256];

	say(1, "ready\n");
	for (;;) {
		int r = poll(&pfd, 1, GR_PERIOD_MS);
		if (r == 0) {
			gr_lose();
			lost++;
			continue;
		}
		if (r < 0)
			continue;	/* EINTR: a signal jmptrace passed on */
		ssize_t n = read(0, buf, sizeof(buf));
		if (n == 0)
			break;
		if (n > 0)
			gr_answer(buf, n, lost);
	}
	say(1, "bye ");
	say_num(1, lost);
	say(1, "\n");
	exit(0);
}
