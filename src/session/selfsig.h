/* selfsig.h - the signals jmptrace itself receives: which ask for a snapshot, which detach, which end it, which it refuses. */
#ifndef JT_SELFSIG_H
#define JT_SELFSIG_H

#include <signal.h>
#include <stdint.h>

/*
 * The loop's tick and due-snapshot wake-up (loop.c), to tracer thread 0:
 * a real-time signal that only interrupts its wait4. Beside tthread.c's
 * wake (SIGRTMIN + 1) and emerg.c's (SIGRTMIN + 2).
 */
#define SELFSIG_TICK (SIGRTMIN + 3)

/*
 * Takes every signal whose default action would end or stop jmptrace (all
 * but SIGKILL and SIGSTOP), so that none of them leaves a traced process
 * with trap bytes in its code. Each only sets a flag for the loop, with
 * two exceptions: a fault in jmptrace itself (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL raised by the CPU, SIGABRT or SIGTRAP raised by jmptrace) takes
 * the last way out at once (emerg.h); SIGTTIN and SIGTTOU are ignored
 * (jmptrace never reads the terminal, and its writes must not stop it).
 * SIGPIPE and SIGXFSZ that the kernel raises for jmptrace's own write are
 * only that write's error. A signal the parent left ignored (nohup's
 * SIGHUP, a background job's SIGQUIT) stays ignored, but for SIGINT,
 * SIGTERM and SIGUSR1. Call it before an attach and again after a launch.
 */
void selfsig_catch(void);

/* SIGUSR1 or SIGINT asked for a snapshot since the last call (the flag is cleared). */
int selfsig_take_snapshot(void);

/*
 * The signal that asked the loop to stop since the last call, or 0 (the
 * flag is cleared): SIGINT, SIGTERM, SIGHUP, or one that ends jmptrace
 * (selfsig_fatal then names it too).
 */
int selfsig_take_stop(void);

/*
 * The signal, sent by another process, whose default action ends
 * jmptrace (SIGQUIT, SIGUSR2, SIGALRM, SIGSEGV by kill...),
 * once one came, else 0. The loop then lets every process go, launched
 * ones too, and main ends by it (util_die_by_signal) after the last report.
 */
int selfsig_fatal(void);

/*
 * SIGTSTP came and is not decided yet: returns 1 with *since_ms (on
 * util_now_ms's clock) when it came. selfsig_tstp_done clears it.
 */
int selfsig_tstp_pending(uint64_t *since_ms);
void selfsig_tstp_done(void);

/* The signal's abbreviation with its SIG, for messages ("SIGQUIT"); async-signal-safe. */
const char *selfsig_name(int sig);

#endif
