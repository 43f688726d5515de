/* handoff.h - the allocating functions of handoff, one per site the tests look for. */
#ifndef JT_PROGS_HANDOFF_H
#define JT_PROGS_HANDOFF_H

void *ho_give(void);
void *ho_take(void);
void *ho_big(void);

#endif
