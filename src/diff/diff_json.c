/* diff_json.c - `jmptrace diff --json FILE`: the diff for tools, built and written with json-c. */
#include <stdio.h>

#include <json-c/json.h>

#include "diff.h"
#include "outfile.h"
#include "util.h"

/* Copies member name of from into to when from has it (reason, pid, command, exe, time_ms). */
static void
diff_json_copy(struct json_object *to, struct json_object *from, const char *name)
{
	struct json_object *m;

	if (json_object_object_get_ex(from, name, &m))
		json_object_object_add(to, name, json_object_get(m));
}

/* {"file", "snapshot", "snapshots", "reason", "pid", "command", "exe", "time_ms", "live_bytes", "live_blocks"} */
static struct json_object *
diff_json_snap(const struct jt_diff_snap *s)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "file", json_object_new_string(s->file));
	json_object_object_add(o, "snapshot", json_object_new_int64(s->index));
	json_object_object_add(o, "snapshots", json_object_new_int64(s->count));
	diff_json_copy(o, s->snap, "reason");
	diff_json_copy(o, s->snap, "pid");
	diff_json_copy(o, s->snap, "command");
	diff_json_copy(o, s->snap, "exe");
	diff_json_copy(o, s->snap, "time_ms");
	json_object_object_add(o, "live_bytes", json_object_new_uint64(s->live_bytes));
	json_object_object_add(o, "live_blocks", json_object_new_uint64(s->live_blocks));
	return o;
}

/*
 * A row's frames as the report gives them, less "address": the row may sum
 * stacks at several addresses, of two runs.
 */
static struct json_object *
diff_json_frames(struct json_object *frames)
{
	static const char *const keep[] = { "function", "file", "line", "module", "inlined" };
	struct json_object *a = json_object_new_array();
	size_t n = json_object_array_length(frames), i, k;

	for (i = 0; i < n; i++) {
		struct json_object *fr = json_object_array_get_idx(frames, i);
		struct json_object *o = json_object_new_object();

		for (k = 0; k < ARRAY_SIZE(keep); k++)
			diff_json_copy(o, fr, keep[k]);
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *
diff_json_row(const struct jt_diff_row *r)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "live_bytes_delta", json_object_new_int64(r->delta_bytes));
	json_object_object_add(o, "live_blocks_delta", json_object_new_int64(r->delta_blocks));
	json_object_object_add(o, "old_live_bytes", json_object_new_uint64(r->old_bytes));
	json_object_object_add(o, "new_live_bytes", json_object_new_uint64(r->new_bytes));
	json_object_object_add(o, "old_live_blocks", json_object_new_uint64(r->old_blocks));
	json_object_object_add(o, "new_live_blocks", json_object_new_uint64(r->new_blocks));
	json_object_object_add(o, "in_old", json_object_new_boolean(r->in_old));
	json_object_object_add(o, "in_new", json_object_new_boolean(r->in_new));
	json_object_object_add(o, "frames", diff_json_frames(r->frames));
	return o;
}

int
diff_write_json(struct jt_outfile *out, const struct jt_diff *d)
{
	struct json_object *o = json_object_new_object(), *rows = json_object_new_array();
	FILE *f = outfile_begin(out, NULL);
	size_t i;
	int r = -1;

	json_object_object_add(o, "old", diff_json_snap(&d->old));
	json_object_object_add(o, "new", diff_json_snap(&d->new));
	json_object_object_add(o, "live_bytes_delta",
			       json_object_new_int64((int64_t)(d->new.live_bytes - d->old.live_bytes)));
	json_object_object_add(o, "live_blocks_delta",
			       json_object_new_int64((int64_t)(d->new.live_blocks - d->old.live_blocks)));
	for (i = 0; i < d->nrows; i++)
		json_object_array_add(rows, diff_json_row(&d->rows[i]));
	json_object_object_add(o, "stacks", rows);
	if (f) {
		fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
						     | JSON_C_TO_STRING_NOSLASHESCAPE), f);
		/* diff says a failure itself and never looks at the close: it waits for the write here. */
		r = outfile_commit(out);
		if (r == 0)
			r = outfile_wait(out);
	}
	json_object_put(o);
	return r;
}
