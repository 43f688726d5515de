/* test_diff.c - unit tests for jmptrace diff: FILE:N arguments, stack keys, loading, matching, text and JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "diff.h"
#include "outfile.h"
#include "tap.h"

#define is_str(got, want, name) do { \
	const char *g_ = (got), *w_ = (want); \
	ok(g_ && strcmp(g_, w_) == 0, "%s (got '%s', want '%s')", name, g_ ? g_ : "(null)", w_); \
} while (0)

static void
test_spec(void)
{
	char *path = NULL, tmpl[] = "/tmp/jt-diff:3-XXXXXX";
	long index = 0;
	int fd;

	ok(diff_spec_parse("a.json", &path, &index) == 0 && index == -1, "FILE: the last snapshot");
	is_str(path, "a.json", "FILE: its path");
	free(path);
	ok(diff_spec_parse("dir/a.json:2", &path, &index) == 0 && index == 2, "FILE:2: snapshot 2");
	is_str(path, "dir/a.json", "FILE:2: the path without :2");
	free(path);
	ok(diff_spec_parse("a.json:-3", &path, &index) == 0 && index == -3, "FILE:-3: from the end");
	free(path);
	ok(diff_spec_parse("a.json:0", &path, &index) < 0, "FILE:0 is refused");
	ok(diff_spec_parse("", &path, &index) < 0, "an empty argument is refused");
	ok(diff_spec_parse("a.json:x", &path, &index) == 0 && index == -1, "FILE:x is a file name");
	is_str(path, "a.json:x", "FILE:x: the whole of it");
	free(path);
	/* A file whose name ends in ":3-XXXXXX"... made to end in ":3". */
	fd = mkstemp(tmpl);
	ok(fd >= 0, "a scratch file");
	close(fd);
	{
		char named[64];

		snprintf(named, sizeof(named), "%s:3", tmpl);
		ok(rename(tmpl, named) == 0, "renamed to a name ending in :3");
		ok(diff_spec_parse(named, &path, &index) == 0 && index == -1, "an existing FILE:3 is a file");
		is_str(path, named, "an existing FILE:3: the whole name");
		free(path);
		unlink(named);
	}
}

static struct json_object *
parse(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	if (!o) {
		printf("Bail out! bad test JSON: %s\n", text);
		exit(1);
	}
	return o;
}

static void
test_key(void)
{
	struct json_object *a = parse("[{\"address\": \"0x1\", \"module\": \"p\", \"function\": \"f\", "
				      "\"file\": \"/src/x.c\", \"line\": 3}, "
				      "{\"module\": \"libc.so.6\", \"offset\": \"0x10\", \"address\": \"0x7f10\"}]");
	struct json_object *b = parse("[{\"address\": \"0x99\", \"module\": \"q\", \"function\": \"f\", "
				      "\"file\": \"/other/x.c\", \"line\": 3, \"extra\": 1}, "
				      "{\"module\": \"libc.so.6\", \"offset\": \"0x10\", \"address\": \"0x5\"}]");
	struct json_object *c = parse("[{\"function\": \"f\", \"file\": \"x.c\", \"line\": 4}, "
				      "{\"module\": \"libc.so.6\", \"offset\": \"0x10\"}]");
	struct json_object *d = parse("[{\"function\": \"f\", \"file\": \"x.c\", \"line\": 3}, "
				      "{\"module\": \"libm.so.6\", \"offset\": \"0x10\"}]");
	struct json_object *e = parse("[{\"function\": \"f\", \"file\": \"x.c\", \"line\": 3}, "
				      "{\"module\": \"libc.so.6\", \"offset\": \"0x11\"}]");
	char *ka = diff_stack_key(a), *kb = diff_stack_key(b), *kc = diff_stack_key(c), *kd = diff_stack_key(d);
	char *ke = diff_stack_key(e);

	ok(strcmp(ka, kb) == 0, "keys ignore addresses, the modules of frames with a function, directories");
	ok(strcmp(ka, kc) != 0, "another line is another key");
	ok(strcmp(ka, kd) != 0, "a frame without a function is its module+0xOFFSET: another module");
	ok(strcmp(ka, ke) != 0, "a frame without a function is its module+0xOFFSET: another offset");
	free(ka);
	free(kb);
	free(kc);
	free(kd);
	free(ke);
	json_object_put(a);
	json_object_put(b);
	json_object_put(c);
	json_object_put(d);
	json_object_put(e);
}

static void
test_load_errors(void)
{
	struct jt_diff_snap s;
	char err[256];

	ok(diff_snap_from_json(parse("[1]"), "a", -1, &s, err, sizeof(err)) < 0, "an array is no report");
	is_str(err, "a: not a jmptrace JSON report (no \"snapshots\" array)", "its message");
	ok(diff_snap_from_json(parse("{\"snapshots\": []}"), "b", -1, &s, err, sizeof(err)) < 0, "no snapshots");
	is_str(err, "b: the report has no snapshots", "its message");
	ok(diff_snap_from_json(parse("{\"snapshots\": [{\"stacks\": []}]}"), "c", 2, &s, err, sizeof(err)) < 0,
	   "no snapshot 2");
	is_str(err, "c: no snapshot 2: the report has 1", "its message");
	ok(diff_snap_from_json(parse("{\"snapshots\": [{\"stacks\": [{\"live_bytes\": 1}]}]}"), "d", -1, &s, err,
			       sizeof(err)) < 0, "a stack without live_blocks");
	is_str(err, "d: snapshot 1: stack 1 has no live_bytes, live_blocks or frames", "its message");
	ok(diff_load("/nonexistent/r.json", -1, &s, err, sizeof(err)) < 0, "a missing file");
	is_str(err, "/nonexistent/r.json: No such file or directory", "its message");
}

/* Two snapshots of one report: f's stacks at two addresses (one key), g only in the old, h only in the new. */
static const char REPORT[] =
	"{\"snapshots\": ["
	" {\"reason\": \"sigusr1\", \"pid\": 7, \"totals\": {\"live_bytes\": 2000000, \"live_blocks\": 9}, \"stacks\": ["
	"  {\"live_bytes\": 1000000, \"live_blocks\": 1, \"frames\": [{\"address\": \"0x10\", \"function\": \"f\", \"file\": \"a.c\", \"line\": 1}]},"
	"  {\"live_bytes\": 234567, \"live_blocks\": 1, \"frames\": [{\"address\": \"0x20\", \"function\": \"f\", \"file\": \"a.c\", \"line\": 1}]},"
	"  {\"live_bytes\": 4096, \"live_blocks\": 2, \"frames\": [{\"function\": \"g\", \"file\": \"a.c\", \"line\": 2}]},"
	"  {\"live_bytes\": 5, \"live_blocks\": 1, \"frames\": [{\"function\": \"k\", \"file\": \"a.c\", \"line\": 9}]}]},"
	" {\"reason\": \"exit\", \"pid\": 7, \"time_ms\": 1500, \"stacks\": ["
	"  {\"live_bytes\": 3000000, \"live_blocks\": 3, \"frames\": [{\"address\": \"0x30\", \"function\": \"f\", \"file\": \"a.c\", \"line\": 1}]},"
	"  {\"live_bytes\": 5, \"live_blocks\": 1, \"frames\": [{\"function\": \"k\", \"file\": \"a.c\", \"line\": 9}]},"
	"  {\"live_bytes\": 1, \"live_blocks\": 1, \"frames\": [{\"function\": \"h\", \"file\": \"b.c\", \"line\": 5, \"module\": \"m\"}]}]}]}";

static void
test_compute(void)
{
	struct jt_diff d = { 0 };
	char err[256], *text = NULL;
	size_t len = 0;
	FILE *f;

	ok(diff_snap_from_json(parse(REPORT), "r.json", 1, &d.old, err, sizeof(err)) == 0, "loads snapshot 1");
	ok(diff_snap_from_json(parse(REPORT), "r.json", -1, &d.new, err, sizeof(err)) == 0, "loads the last");
	is_u64(d.new.index, 2, "the last is snapshot 2");
	is_u64(d.old.live_bytes, 2000000, "totals.live_bytes when there");
	is_u64(d.new.live_bytes, 3000006, "the stacks' sum without totals");
	diff_compute(&d);
	is_u64(d.nrows, 4, "four keys: f, g, h, k");
	if (d.nrows != 4) {
		diff_free(&d);
		return;
	}
	is_u64(d.rows[0].old_bytes, 1234567, "f: the old stacks summed");
	is_u64((uint64_t)d.rows[0].delta_bytes, 3000000 - 1234567, "f: grew most, first");
	ok(d.rows[1].in_new && !d.rows[1].in_old && d.rows[1].delta_bytes == 1, "h: only in the new, second");
	ok(d.rows[2].delta_bytes == 0 && d.rows[2].in_old && d.rows[2].in_new, "k: unchanged, third");
	ok(d.rows[3].delta_bytes == -4096 && d.rows[3].delta_blocks == -2 && !d.rows[3].in_new, "g: gone, last");

	f = open_memstream(&text, &len);
	ok(diff_write_text(f, &d, 10) == 0, "diff_write_text");
	fclose(f);
	ok(strstr(text, "old:  r.json, snapshot 1 of 2 (sigusr1), pid 7\nnew:  r.json, snapshot 2 of 2 (exit), "
		  "pid 7, at 1,500 ms\nlive:  2,000,000 -> 3,000,006 bytes (+1,000,006), 9 -> 5 blocks (-4)\n") != NULL,
	   "text: the header");
	ok(strstr(text, "top 2 of 2 stacks that grew, by live bytes:\n\n#1: +1,765,433 bytes (+1 block): "
		  "1,234,567 -> 3,000,000 live bytes\n    at f (a.c:1)\n\n#2: +1 byte (+1 block): 0 -> 1 live bytes "
		  "(a stack the old snapshot does not have)\n    at h (b.c:5)\n\n") != NULL, "text: the growth");
	ok(strstr(text, "top 1 of 1 stack that shrank, by live bytes:\n\n#1: -4,096 bytes (-2 blocks): 4,096 -> 0 "
		  "live bytes (a stack the new snapshot does not have)\n    at g (a.c:2)\n\n") != NULL, "text: the shrinkage");
	ok(strstr(text, "SUMMARY: live bytes 2,000,000 -> 3,000,006 (+1,000,006); 2 stacks grew by 1,765,434 bytes, "
		  "1 shrank by 4,096 bytes, 1 unchanged\n") != NULL, "text: the SUMMARY");
	if (tap_failed)
		printf("# %s", text);
	free(text);
	diff_free(&d);
}

static void
test_json(void)
{
	struct jt_diff d = { 0 };
	struct json_object *o, *st, *m;
	char err[256], path[] = "/tmp/jt-diff-json-XXXXXX";
	int fd = mkstemp(path);
	struct jt_outfile *out;

	close(fd);
	diff_snap_from_json(parse(REPORT), "r.json", 1, &d.old, err, sizeof(err));
	diff_snap_from_json(parse(REPORT), "r.json", 2, &d.new, err, sizeof(err));
	diff_compute(&d);
	out = outfile_open(path);
	ok(out && diff_write_json(out, &d) == 0 && outfile_close(out) == 0, "diff_write_json");
	o = json_object_from_file(path);
	ok(o != NULL, "json-c reads it back");
	if (!o)
		return;
	ok(json_object_object_get_ex(o, "live_bytes_delta", &m) && json_object_get_int64(m) == 1000006,
	   "live_bytes_delta");
	ok(json_object_object_get_ex(o, "stacks", &m) && json_object_array_length(m) == 4, "four stacks");
	st = json_object_array_get_idx(m, 3);
	ok(json_object_object_get_ex(st, "live_bytes_delta", &m) && json_object_get_int64(m) == -4096,
	   "the last one shrank by 4096");
	ok(json_object_object_get_ex(st, "in_new", &m) && !json_object_get_boolean(m), "and is not in the new");
	ok(json_object_object_get_ex(o, "new", &m) && json_object_object_get_ex(m, "time_ms", &m)
	   && json_object_get_int(m) == 1500, "new.time_ms copied");
	json_object_put(o);
	unlink(path);
	diff_free(&d);
}

int
main(void)
{
	test_spec();
	test_key();
	test_load_errors();
	test_compute();
	test_json();
	return tap_done();
}
