/* sink.h - opaque helpers that stop the compiler from removing, merging or folding allocations. */
#ifndef JT_PROGS_SINK_H
#define JT_PROGS_SINK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes one byte of p (when p and n are non-zero) and stores p where the optimizer cannot see. */
void sink(void *p, size_t n);
/* Returns n unchanged; the compiler cannot know the value, so it cannot fold a size or a NULL. */
size_t opaque_size(size_t n);
void *opaque_ptr(void *p);
/* Writes s to fd with write(2): the programs that must not touch stdio use this. */
void say(int fd, const char *s);
/* Writes the decimal form of v to fd with write(2). */
void say_num(int fd, unsigned long v);
/*
 * Overwrites the stack below the caller and the scratch registers, so that no stale copy of
 * a dropped pointer survives to the exit, in jmptrace's leak check as in valgrind's.
 */
void scrub(void);
/* Parses a non-negative decimal number, or returns def when s is NULL; allocates nothing. */
unsigned long arg_num(const char *s, unsigned long def);

#ifdef __cplusplus
}
#endif

#endif
