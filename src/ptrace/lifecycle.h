/* lifecycle.h - processes and threads coming and going: a new thread or child adopted, fork, exec, exit. */
#ifndef JT_LIFECYCLE_H
#define JT_LIFECYCLE_H

#include <sys/types.h>

#include "restart.h"

struct jt_tracer;
struct jt_thread;

/*
 * A stop from a tid we have not seen: a new thread, or a new process from
 * fork, vfork or clone. Returns its new block, or NULL when it is not ours
 * to trace (a fork without -f: cleaned of our trap bytes and let go) or
 * could not be set up.
 */
struct jt_thread *lifecycle_adopt(struct jt_tracer *tr, pid_t tid);

/*
 * t stopped at a fork, vfork or clone event (event is its PTRACE_EVENT_*):
 * the child exists, traced by us, and stops before its first instruction.
 * Waits for that stop; returns the child's tid with the stop's wait status
 * in *status, for the caller to handle at once (stop_take_child), or 0
 * when there is nothing to handle. Marks a vfork parent as waiting for
 * its child.
 */
pid_t lifecycle_wait_child(struct jt_tracer *tr, struct jt_thread *t, unsigned event, int *status);

/*
 * execve replaced the image of t's process: start over on the new one, from
 * zero, or let it go when it is not ours to trace. The image that ended, if
 * traced and it made a traced call, has its report left due on tr->ended.
 * t may be freed (a non-leader that exec'd takes the leader's tid). Returns
 * the restart of the thread that survives.
 */
struct restart lifecycle_exec(struct jt_tracer *tr, struct jt_thread *t);

/*
 * Thread tid ended with wait status status: forgets it, and its process when
 * it was the leader (a followed child's report is left due on tr->ended).
 */
void lifecycle_exited(struct jt_tracer *tr, pid_t tid, int status);

/* --pin: a thread we let go gets the affinity it had before we pinned it. */
void lifecycle_unpin(struct jt_thread *t);

#endif
