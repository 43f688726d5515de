/* pb.h - a protocol buffers wire-format encoder: varints, length-delimited fields, packed arrays, nested messages. */
#ifndef JT_PB_H
#define JT_PB_H

#include <stddef.h>
#include <stdint.h>

/* A growing output buffer; all zero is an empty one. Memory runs out only as xmalloc does. */
struct pb_buf {
	unsigned char *p;
	size_t len, cap;
};

/* Frees the buffer's memory and leaves it empty. */
void pb_free(struct pb_buf *b);

/* Appends v as a base-128 varint, with no tag. */
void pb_varint(struct pb_buf *b, uint64_t v);

/*
 * Appends field number `field` as a varint (wire type 0): uint64, and int64
 * as its two's-complement bits (not zigzag: that is sint64). A zero value is
 * skipped, as proto3 writes its defaults.
 */
void pb_uint(struct pb_buf *b, unsigned field, uint64_t v);

/* Appends field `field` as length-delimited bytes (wire type 2), even when n is 0. */
void pb_bytes(struct pb_buf *b, unsigned field, const void *data, size_t n);

/* Appends a repeated varint field in packed form (one length-delimited field); nothing when n is 0. */
void pb_packed(struct pb_buf *b, unsigned field, const uint64_t *v, size_t n);

/*
 * Starts an embedded message as field `field` and returns a mark for
 * pb_end: the message's fields are appended to b in between, and pb_end
 * puts the length in front of them. Marks nest.
 */
size_t pb_begin(struct pb_buf *b, unsigned field);
void pb_end(struct pb_buf *b, size_t mark);

#endif
