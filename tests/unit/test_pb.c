/* test_pb.c - unit test of the protocol buffers encoder against the wire format's own examples. */
#include <stdint.h>
#include <string.h>

#include "pb.h"
#include "tap.h"

/* Checks that b holds exactly want[0..n), then empties b. */
static void
check(struct pb_buf *b, const unsigned char *want, size_t n, const char *name)
{
	ok(b->len == n && memcmp(b->p, want, n) == 0, "%s (%zu bytes, want %zu)", name, b->len, n);
	pb_free(b);
}

static void
test_scalars(void)
{
	struct pb_buf b = { 0 };
	static const unsigned char v150[] = { 0x08, 0x96, 0x01 };
	static const unsigned char str[] = { 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g' };
	static const unsigned char max[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const unsigned char empty[] = { 0x32, 0x00 };
	static const unsigned char big_field[] = { 0x80, 0x01, 0x01 };

	pb_uint(&b, 1, 150);
	check(&b, v150, sizeof(v150), "field 1 = 150: 08 96 01");
	pb_bytes(&b, 2, "testing", 7);
	check(&b, str, sizeof(str), "field 2 = \"testing\": 12 07 ...");
	pb_uint(&b, 1, UINT64_MAX);
	check(&b, max, sizeof(max), "field 1 = 2^64-1 (int64 -1): ten bytes");
	pb_uint(&b, 1, 0);
	ok(b.len == 0, "a zero value is not written (proto3 default)");
	pb_bytes(&b, 6, "", 0);
	check(&b, empty, sizeof(empty), "an empty string is written: 32 00");
	pb_uint(&b, 16, 1);
	check(&b, big_field, sizeof(big_field), "field 16: a two-byte tag");
}

static void
test_packed_nested(void)
{
	struct pb_buf b = { 0 };
	static const uint64_t vals[] = { 3, 270, 86942 };
	static const unsigned char packed[] = { 0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05 };
	static const unsigned char nested[] = { 0x1a, 0x03, 0x08, 0x96, 0x01 };
	unsigned char long_msg[3 + 200 * 3];
	size_t m, m2;

	pb_packed(&b, 4, vals, 3);
	check(&b, packed, sizeof(packed), "packed field 4 = [3, 270, 86942]: 22 06 03 8e 02 9e a7 05");
	pb_packed(&b, 4, vals, 0);
	ok(b.len == 0, "an empty packed array is not written");
	m = pb_begin(&b, 3);
	pb_uint(&b, 1, 150);
	pb_end(&b, m);
	check(&b, nested, sizeof(nested), "message field 3 { 1: 150 }: 1a 03 08 96 01");

	/* 200 x { 1: 1 } inside field 2 inside field 1: lengths of two bytes move the bodies. */
	m = pb_begin(&b, 1);
	m2 = pb_begin(&b, 2);
	for (int i = 0; i < 200; i++)
		pb_uint(&b, 1, 1);
	pb_end(&b, m2);
	pb_end(&b, m);
	memset(long_msg, 0, sizeof(long_msg));
	long_msg[0] = 0x0a;
	long_msg[1] = 0x93;	/* 403 = 3 + 400 */
	long_msg[2] = 0x03;
	ok(b.len == 3 + 3 + 400 && memcmp(b.p, long_msg, 3) == 0 && b.p[3] == 0x12 && b.p[4] == 0x90
	   && b.p[5] == 0x03 && b.p[6] == 0x08 && b.p[7] == 0x01 && b.p[b.len - 2] == 0x08 && b.p[b.len - 1] == 0x01,
	   "nested messages of 400 and 403 bytes: 0a 93 03 12 90 03 08 01 ...");
	pb_free(&b);
}

int
main(void)
{
	test_scalars();
	test_packed_nested();
	return tap_done();
}
