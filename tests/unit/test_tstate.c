/* test_tstate.c - unit tests for tstate: exactly the documented edges are allowed, and a debug build stops on any other. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "thread.h"

/* The edges tstate.h documents, written out again: the table in tstate.c must hold these and no others. */
static const int doc_edges[][2] = {
	{ TS_RUNNING, TS_STOPPING },
	{ TS_RUNNING, TS_STOPPED },
	{ TS_STOPPING, TS_STOPPED },
	{ TS_STOPPING, TS_GROUP_STOPPED },
	{ TS_STOPPING, TS_RUNNING },
	{ TS_STOPPED, TS_STOPPING },
	{ TS_STOPPED, TS_RUNNING },
	{ TS_GROUP_STOPPED, TS_RUNNING },
	{ TS_STOPPED, TS_IN_TRANSIT },
	{ TS_GROUP_STOPPED, TS_IN_TRANSIT },
	{ TS_IN_TRANSIT, TS_STOPPED },
	{ TS_IN_TRANSIT, TS_GROUP_STOPPED },
};

static int
documented(int from, int to)
{
	if (from == to)
		return 1;
	for (size_t i = 0; i < sizeof(doc_edges) / sizeof(doc_edges[0]); i++)
		if (doc_edges[i][0] == from && doc_edges[i][1] == to)
			return 1;
	return 0;
}

static void
test_table(void)
{
	int allowed = 0;

	for (int from = 0; from < TS_NSTATES; from++)
		for (int to = 0; to < TS_NSTATES; to++) {
			int got = tstate_edge_ok(from, to);

			allowed += got;
			ok(got == documented(from, to), "%s -> %s: %s", tstate_name(from), tstate_name(to),
			   documented(from, to) ? "allowed" : "refused");
		}
	is_u64(allowed, 17, "17 changes allowed: 12 edges, and staying put in each of 5 states");
	ok(!tstate_edge_ok(TS_NSTATES, TS_RUNNING) && !tstate_edge_ok(TS_RUNNING, -1), "a state out of range is refused");
}

/* A thread held for a step, handed over and received, then let go: the usual way of a step on tracer thread 1. */
static void
test_setter(void)
{
	struct jt_thread t = { .tid = 4242 };

	thread_set_state(&t, TS_STOPPED);
	ok(thread_is_stopped(&t) && thread_wants_stop(&t), "held: stopped, and its stop wanted");
	thread_set_state(&t, TS_IN_TRANSIT);
	ok(thread_in_transit(&t) && !thread_is_stopped(&t), "handed over: in transit, not stopped");
	thread_set_state(&t, TS_GROUP_STOPPED);
	ok(thread_is_stopped(&t), "received in a group-stop: stopped");
	thread_set_state(&t, TS_RUNNING);
	ok(!thread_wants_stop(&t), "let go: its next stop is not one we wait for");
}

#ifdef JT_DEBUG
/* The debug build (make check's sanitizer variant) stops at an undocumented change. */
static void
test_debug_check(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct jt_thread t = { .tid = 4243 };

		close(2);	/* the message is expected: keep the TAP output clean */
		thread_set_state(&t, TS_IN_TRANSIT);	/* RUNNING -> IN_TRANSIT: a thread handed over that was never held */
		_exit(0);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid, "the child ran");
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "RUNNING -> IN_TRANSIT aborts a debug build");
}
#endif

int
main(void)
{
	test_table();
	test_setter();
#ifdef JT_DEBUG
	test_debug_check();
#endif
	return tap_done();
}
