/* attach.h - the attach test program: blocks allocated before and after jmptrace -p. */
#ifndef JT_PROGS_ATTACH_H
#define JT_PROGS_ATTACH_H

#define NTHREADS 4
#define OLD_BLOCKS 5	/* old_leak(): blocks made before the attach, freed after it */
#define OLD_SIZE 100
#define NEW_BLOCKS 3	/* new_leak(): blocks each thread leaks after the attach */
#define NEW_SIZE 64

void old_leak(void);
void old_free(void);
void new_leak(void);

#endif
