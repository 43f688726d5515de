/*
 * main.c - echo: copies stdin to stdout, then writes "echo: N bytes" to stderr and exits 0.
 * The input is read whole into a buffer that echo_grow() doubles with realloc, from 4096
 * bytes, and the buffer is left live: for N bytes it ends at the first power of two
 * >= 4096 that is larger than N.
 */
#include <unistd.h>
#include "../common/sink.h"

char *echo_grow(char *buf, size_t *cap);

int
main(void)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		if (len == cap)
			buf = echo_grow(buf, &cap);
		ssize_t r = read(0, buf + len, cap - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(1, buf + off, len - off);
		if (w <= 0)
			return 1;
		off += (size_t)w;
	}
	say(2, "echo: ");
	say_num(2, len);
	say(2, " bytes\n");
	return 0;
}
