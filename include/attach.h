/* attach.h - attaching to a running process (-p). */
#ifndef JT_ATTACH_H
#define JT_ATTACH_H

#include <sys/types.h>

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
