/* sink.c - opaque helpers shared by the test programs; none of them allocates. */
#include <string.h>
#include <unistd.h>
#include "sink.h"

static __thread void *volatile sink_slot;

__attribute__((noipa)) void
sink(void *p, size_t n)
{
	if (p && n)
		((volatile char *)p)[0] = 1;
	sink_slot = p;
}

__attribute__((noipa)) size_t
opaque_size(size_t n)
{
	return n;
}

__attribute__((noipa)) void *
opaque_ptr(void *p)
{
	return p;
}

void
say(int fd, const char *s)
{
	size_t len = strlen(s);

	while (len > 0) {
		ssize_t w = write(fd, s, len);
		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

void
say_num(int fd, unsigned long v)
{
	char buf[24];
	int i = sizeof(buf) - 1;

	buf[i] = '\0';
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	say(fd, buf + i);
}

unsigned long
arg_num(const char *s, unsigned long def)
{
	unsigned long v = 0;

	if (!s)
		return def;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (unsigned long)(*s++ - '0');
	return v;
}

__attribute__((noinline, noipa)) void
scrub(void)
{
	char junk[16384];

	memset(junk, 0, sizeof(junk));
	__asm__ volatile("" : : "r"(junk) : "memory");
	__asm__ volatile("xor %%eax, %%eax\n\txor %%ecx, %%ecx\n\txor %%edx, %%edx\n\t"
			 "xor %%esi, %%esi\n\txor %%edi, %%edi\n\txor %%r8d, %%r8d\n\t"
			 "xor %%r9d, %%r9d\n\txor %%r10d, %%r10d\n\txor %%r11d, %%r11d"
			 : : : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "memory");
}
