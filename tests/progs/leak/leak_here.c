/* leak_here.c - leaks n blocks of LEAK_SIZE(i) bytes, all from one call site. */
#include <stdlib.h>
#include "leak.h"

struct node {
	struct node *next;
};

struct node *leak_list;

__attribute__((noinline, noipa)) void
leak_here(int n)
{
	for (int i = 0; i < n; i++) {
		struct node *b = malloc(LEAK_SIZE(i)); /* LEAK-SITE */
		b->next = leak_list;
		leak_list = b;
	}
}
