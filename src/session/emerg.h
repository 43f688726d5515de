/* emerg.h - the last way out: a fault or an exhausted allocator in jmptrace lets every traced thread go as it was. */
#ifndef JT_EMERG_H
#define JT_EMERG_H

struct jt_tracer;

/*
 * Makes the way out ready for tr's session: its signal (which makes each
 * tracer thread let its own tracees go) and an alternate signal stack for
 * the calling thread, so that a stack overflow still gets there. Call it
 * once from tracer thread 0, then emerg_thread_init from every other
 * tracer thread. Returns 0, or -1 with errno set.
 */
int emerg_init(struct jt_tracer *tr);
int emerg_thread_init(void);

/*
 * The way out, from any thread, in a signal handler or not: async-signal-
 * safe, takes no lock and allocates nothing, since the session may be
 * half-updated and the allocator broken. Says in one line on stderr why
 * (the text why) and what it did. Puts back every return address replaced and
 * every trap byte of ours, and has every tracer thread detach each of its
 * tracees with its registers right and its held signal delivered (a
 * thread parked between tracer threads is seized and given back its
 * registers and signal mask). Then jmptrace dies: by sig with its default
 * action, or with _exit(1) when sig is 0. Never returns. A second call,
 * from a fault inside the way out, dies at once by its signal.
 */
void emerg_exit(int sig, const char *why) __attribute__((noreturn));

/* Non-zero once the way out has begun (the loop stops handling stops). */
int emerg_begun(void);


#endif
