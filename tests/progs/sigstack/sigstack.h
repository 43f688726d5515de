/* sigstack.h - what the files of the sigstack test program share. */
#ifndef JT_PROGS_SIGSTACK_H
#define JT_PROGS_SIGSTACK_H

#include <signal.h>
#include <stddef.h>

/* The signal this thread's next allocator call sends it from its middle (0: none). */
extern __thread volatile sig_atomic_t ss_kick;
/* Set: this thread's SIGUSR1 handler's own malloc sends SIGUSR2 from its middle. */
extern __thread volatile sig_atomic_t ss_nest;
/* Handler runs in all threads, for the summary line (atomic adds). */
extern unsigned long ss_usr1, ss_usr2;
/* Blocks the SIGALRM handler kept, and how many it keeps at most. */
extern volatile sig_atomic_t ss_alrm, ss_alrm_max;

void ss_on_usr1(int sig);
void ss_on_usr2(int sig);
void ss_on_alrm(int sig);
void ss_use_malloc(void);
void ss_use_calloc(void);
void ss_use_realloc(void);
void ss_use_nested(void);
void ss_churn(void);
void ss_rounds(unsigned long n);

#endif
