/* tstate.c - the allowed changes of a traced thread's state (tstate.h), checked in a debug build. */
#include <stdio.h>
#include <stdlib.h>

#include "tstate.h"

#define E(from, to) (1u << ((from) * TS_NSTATES + (to)))

/* One bit per documented edge (tstate.h): from * TS_NSTATES + to. */
static const unsigned long tstate_edges =
	E(TS_RUNNING, TS_STOPPING) | E(TS_RUNNING, TS_STOPPED) |
	E(TS_STOPPING, TS_STOPPED) | E(TS_STOPPING, TS_GROUP_STOPPED) | E(TS_STOPPING, TS_RUNNING) |
	E(TS_STOPPED, TS_STOPPING) | E(TS_STOPPED, TS_RUNNING) | E(TS_STOPPED, TS_IN_TRANSIT) |
	E(TS_GROUP_STOPPED, TS_RUNNING) | E(TS_GROUP_STOPPED, TS_IN_TRANSIT) |
	E(TS_IN_TRANSIT, TS_STOPPED) | E(TS_IN_TRANSIT, TS_GROUP_STOPPED);

int
tstate_edge_ok(enum jt_thread_state from, enum jt_thread_state to)
{
	if ((unsigned)from >= TS_NSTATES || (unsigned)to >= TS_NSTATES)
		return 0;
	return from == to || (tstate_edges & E(from, to)) != 0;
}

const char *
tstate_name(enum jt_thread_state s)
{
	static const char *const names[TS_NSTATES] = {
		"RUNNING", "STOPPING", "STOPPED", "GROUP_STOPPED", "IN_TRANSIT",
	};

	return (unsigned)s < TS_NSTATES ? names[s] : "?";
}

#ifdef JT_DEBUG
void
tstate_check(pid_t tid, enum jt_thread_state from, enum jt_thread_state to)
{
	if (tstate_edge_ok(from, to))
		return;
	/* A debug build only: the state machine is wrong, and the run that shows it must not pass. */
	fprintf(stderr, "jmptrace: thread %d: state %s -> %s is not an edge of tstate.h\n", tid,
		tstate_name(from), tstate_name(to));
	abort();
}
#endif
