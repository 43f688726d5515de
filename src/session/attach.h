/* attach.h - attaching to a running process (-p). */
#ifndef JT_ATTACH_H
#define JT_ATTACH_H

#include <sys/ptrace.h>
#include <sys/types.h>

/* What every thread of an attached process is seized with. No EXITKILL: we leave it running. */
#define ATTACH_PTRACE_OPTIONS (PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | \
			       PTRACE_O_TRACEVFORKDONE | \
			       PTRACE_O_TRACEEXEC)

struct jt_tracer;
struct jt_proc;

/*
 * Seizes every thread of pid and waits until all of them are stopped. On
 * success stores the new process in *out and returns 0; the caller sets up
 * the image and resumes it. Returns -1 after printing one line that says why
 * (no such process, zombie, kernel thread, already traced, not permitted).
 */
int attach_process(struct jt_tracer *tr, pid_t pid, struct jt_proc **out);

#endif
