/*
 * main.c - leakgrow: a program to attach to that loses blocks over time. Writes "ready",
 * then loses a block (gr_lose) every GR_PERIOD_MS while stdin is quiet; answers the line "keep"
 * with "kept" after gr_keep (a block whose only pointer is in a block made before "ready") and
 * any other line with "pong N" (N: blocks lost so far); at the end of stdin writes "bye N" and
 * exits 0.
 * A signal ends it the default way. Only read(2), write(2) and poll(2) do I/O, so the only
 * mallocs are gr_lose's.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gr.h"
#include "../common/sink.h"

/* Answers every line of buf[0..n) (whole lines: the test writes them in one go). */
static void
gr_answer(const char *buf, ssize_t n, unsigned long lost, void **holder)
{
	const char *line = buf;

	for (const char *c = buf; c < buf + n; c++) {
		if (*c != '\n')
			continue;
		if (c - line == 4 && !memcmp(line, "keep", 4)) {
			gr_keep(holder);
			say(1, "kept\n");
		} else {
			say(1, "pong ");
			say_num(1, lost);
			say(1, "\n");
		}
		line = c + 1;
	}
}

int
main(void)
{
	unsigned long lost = 0;
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	char buf[256];
	void **holder = calloc(1, GR_HOLDER_SIZE);

	if (!holder)
		return 1;
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
			gr_answer(buf, n, lost, holder);
	}
	say(1, "bye ");
	say_num(1, lost);
	say(1, "\n");
	exit(0);
}
