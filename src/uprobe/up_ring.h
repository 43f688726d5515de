/* up_ring.h - a perf ring buffer read from user space, and the merge of several by time. */
#ifndef JMPTRACE_UP_RING_H
#define JMPTRACE_UP_RING_H

#include <stddef.h>
#include <stdint.h>

struct perf_event_mmap_page;

/* One thread's ring buffer: its first event's; every other event of the thread writes through it. */
struct up_ring {
	int fd;
	int mapped;			/* meta was mmap'ed by up_ring_map (munmap'ed at close) */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size;			/* bytes of data, a power of two */
	uint64_t pos, head;		/* the next record to read, and where the kernel's writing ended */
	uint8_t *rec;			/* the record at pos (in data, or copied to scratch when it wraps) */
	uint64_t time;			/* rec's sample time, 0 for a record that is not a sample */
	int hup;			/* its thread ended: poll would say so at once, every time */
	uint8_t scratch[65536 + 16] __attribute__((aligned(8)));	/* a record's size is a u16; the kernel's are 8-aligned */
};

/* Maps the ring of perf event fd, size bytes of data (a power of two of pages). NULL with errno set. */
struct up_ring *up_ring_map(int fd, uint64_t size);

/*
 * A ring over memory the caller owns: map is one page of struct
 * perf_event_mmap_page followed by size bytes of data (tests build rings so).
 */
struct up_ring *up_ring_wrap(int fd, void *map, uint64_t size);

void up_ring_close(struct up_ring *r);

/*
 * Hands apply every record of rings[0..n) whose sample was taken before cut
 * (nanoseconds of the samples' clock, read by the caller before this call),
 * oldest first, records that are not samples at once, then frees their
 * space. The heads are read one after another, not at one instant: a free on
 * thread B can be written just after B's head was read and the malloc on
 * thread A that returns the same block just before A's was; applying that
 * malloc now and the free at the next call would free the new block. A
 * sample taken before cut was written before any head is read here, and so
 * was everything it waited for (a free's sample is written at free's entry,
 * before the block is released), so the order holds. Later samples stay in
 * their rings for the next call.
 */
void up_ring_merge(struct up_ring **rings, size_t n, uint64_t cut,
		   void (*apply)(void *arg, const uint8_t *rec), void *arg);

#endif
