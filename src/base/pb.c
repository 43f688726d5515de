/* pb.c - a protocol buffers wire-format encoder: what profile.proto needs and nothing else. */
#include <stdlib.h>
#include <string.h>

#include "pb.h"
#include "util.h"

/*
 * Hand-written rather than protobuf-c: that would need protoc-c to generate
 * code from profile.proto at build time (two more packages), for what is
 * here a few dozen lines of varints.
 */

/* Wire types (encoding.md of protocol buffers). */
#define PB_VARINT 0
#define PB_LEN 2

/* The most bytes a varint of 64 bits takes. */
#define PB_VARINT_MAX 10

static void
pb_reserve(struct pb_buf *b, size_t more)
{
	if (b->len + more <= b->cap)
		return;
	b->cap = b->cap ? 2 * b->cap : 4096;
	while (b->cap < b->len + more)
		b->cap *= 2;
	b->p = xrealloc(b->p, b->cap);
}

void
pb_free(struct pb_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Writes v as a varint at out; returns the bytes written. */
static size_t
pb_varint_put(unsigned char *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (unsigned char)v;
	return n;
}

static size_t
pb_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

void
pb_varint(struct pb_buf *b, uint64_t v)
{
	pb_reserve(b, PB_VARINT_MAX);
	b->len += pb_varint_put(b->p + b->len, v);
}

static void
pb_tag(struct pb_buf *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void
pb_uint(struct pb_buf *b, unsigned field, uint64_t v)
{
	if (v == 0)
		return;
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

void
pb_bytes(struct pb_buf *b, unsigned field, const void *data, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	pb_reserve(b, n);
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
}

void
pb_packed(struct pb_buf *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0, i;

	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		len += pb_varint_len(v[i]);
	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	for (i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

size_t
pb_begin(struct pb_buf *b, unsigned field)
{
	pb_tag(b, field, PB_LEN);
	return b->len;
}

void
pb_end(struct pb_buf *b, size_t mark)
{
	uint64_t len = b->len - mark;
	size_t k = pb_varint_len(len);

	/* The length goes in front of the body: move the body up by its size. */
	pb_reserve(b, k);
	memmove(b->p + mark + k, b->p + mark, len);
	pb_varint_put(b->p + mark, len);
	b->len += k;
}
