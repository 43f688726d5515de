/*
 * main.c - leakcycle: a ring of CY_LEN blocks that nothing references (memcheck's
 * leak-cycle: one of them is the definitely lost leader, the others are indirectly lost) and
 * a ring a global points into (all still reachable). Writes "leakcycle: done", returns 0.
 */
#include "cy.h"
#include "../common/sink.h"

int
main(void)
{
	(void)cy_ring(cy_lost_node);
	cy_kept_ptr = cy_ring(cy_kept_node);
	scrub();
	say(1, "leakcycle: done\n");
	return 0;
}
