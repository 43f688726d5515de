/* detach.h - letting every traced process go at the end of an attach (-p), followed children too. */
#ifndef JT_DETACH_H
#define JT_DETACH_H

struct jt_tracer;

/*
 * Tracer thread 0, tr->lock held (both checked in the debug build). Leaves every traced process as it would
 * be untraced: the attached one and, with -f, each followed child and each
 * vfork child. Stops every thread, takes in any child whose creation was
 * reported, puts hijacked return addresses and breakpoint bytes back, and
 * detaches every thread, delivering the signals held for them. Sets
 * tr->detached. Processes other than the main one are freed.
 */
void detach_all(struct jt_tracer *tr);

#endif
