/* stop.h - one stop of one traced thread, as a pipeline: classify the wait status (stop_event.h), handle the event, restart the thread. */
#ifndef JT_STOP_H
#define JT_STOP_H

#include <sys/types.h>

#include "stop_event.h"

struct jt_tracer;

/* Handles one wait status of one of the calling tracer thread's tracees (tr->tthreads.lock held: checked in the debug build). */
void stop_dispatch(struct jt_tracer *tr, pid_t tid, int status);

#endif
