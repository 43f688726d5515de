/* report_seen.h - what one JSON file already holds of each process's stacks, so that a snapshot lists only what changed. */
#ifndef JT_REPORT_SEEN_H
#define JT_REPORT_SEEN_H

#include <stddef.h>
#include <stdint.h>

struct jt_heap;

/* A stack's figures as the file last listed them; a stack whose figures are the same is left out. */
struct seen_fig {
	uint64_t live_bytes, live_blocks, alloc_calls, alloc_bytes, frees, temporary;
	uint64_t peak_bytes, peak_blocks;
	uint64_t aged;			/* 1 when the two below are known */
	uint64_t oldest_ms, newest_ms;	/* when its oldest and newest live block were allocated (time_ms) */
};

/* One file's record: per process heap, its number in the file and each stack's last figures. */
struct jt_seen;
/* What one heap's snapshots in the file hold. */
struct seen_heap;

/* An empty record, for a new file. Never NULL. */
struct jt_seen *seen_new(void);
/* Frees the record (NULL is fine). */
void seen_free(struct jt_seen *s);

/*
 * The record of heap h (heap_identity's: its frozen copies are it) of the
 * image pid and execs name, in this file: a
 * new one (a new number) the first time, after seen_heap_end, or when h
 * has fewer stacks than the file knew of (another heap at the same
 * address: its ids started again). Never NULL.
 */
struct seen_heap *seen_heap_of(struct jt_seen *s, int pid, unsigned execs, const struct jt_heap *h);
/* Its image ended (the process exited, or an exec replaced it): the record is freed at the next seen_heap_of. */
void seen_heap_end(struct seen_heap *sh);
/* Its number in the file, from 1: the JSON's "heap", which groups a process's snapshots. */
unsigned seen_heap_key(const struct seen_heap *sh);

/*
 * Whether stack id's figures differ from those the file last listed for it
 * (a stack never listed differs), and records fig as listed. *first is set
 * to 1 when the file holds none of its entries yet: its frames are due.
 */
int seen_changed(struct seen_heap *sh, uint32_t id, const struct seen_fig *fig, int *first);

/*
 * The file's frame table: the number of the frame whose JSON object is
 * text (len bytes), from 0 in the order the file first gives them. A frame
 * the table does not hold yet is added, and its text kept until
 * seen_frames_take: the snapshot being written lists it in "new_frames".
 */
uint32_t seen_frame(struct jt_seen *s, const char *text, size_t len);
/* The texts of the frames added since the last call, joined by ",\n  " ("" for none; s keeps it until the next call). */
const char *seen_frames_take(struct jt_seen *s);

#endif
