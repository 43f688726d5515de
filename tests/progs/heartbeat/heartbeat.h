/* heartbeat.h - shared constants of the heartbeat test program. */
#ifndef HEARTBEAT_H
#define HEARTBEAT_H

#define NTHREADS 8
#define KEEP_SIZE 72
#define KEEP_EVERY 64

void *hb_keep(void);

#endif
