/*
 * main.c - leakcycle: a ring of CY_LEN blocks that nothing references (memcheck's
 * leak-cycle: one of them is the definitely lost leader, the others are indirectly lost) and
 * a ring a global points into (all still reachable). Writes "leakcycle: done", returns 0.
 * "leakcycle last-cycle" makes the kept ring first and then a lost ring of CY_LAST_SIZE
 * blocks, the last thing it allocates; "leakcycle last-single" the kept ring and then one
 * lost block of CY_SINGLE_SIZE: glibc's arena points at the top chunk, inside the last block.
 */
#include <string.h>
#include "cy.h"
#include "../common/sink.h"

int
main(int argc, char **argv)
{
	const char *last = argc > 1 ? argv[1] : "";

	if (strcmp(last, "last-cycle") == 0) {
		cy_kept_ptr = cy_ring(cy_kept_node);
		(void)cy_ring(cy_last_node);
	} else if (strcmp(last, "last-single") == 0) {
		cy_kept_ptr = cy_ring(cy_kept_node);
		(void)cy_last_single();
	} else {
		(void)cy_ring(cy_lost_node);
		cy_kept_ptr = cy_ring(cy_kept_node);
	}
	scrub();
	say(1, "leakcycle: done\n");
	return 0;
}
