/* diff_text.c - `jmptrace diff`'s text output: the stacks that grew and shrank most, valgrind style. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cxxname.h"
#include "diff.h"
#include "report_common.h"
#include "sym.h"
#include "util.h"

/* Figures as the text report prints them (util_num); with sign, a "+" or "-" in front ("0" has none). Returns buf. */
static const char *
diff_num(char buf[32], uint64_t v, int sign)
{
	int64_t s = (int64_t)v;
	uint64_t mag = sign && s < 0 ? -(uint64_t)v : v;

	buf[0] = sign && s != 0 ? (s < 0 ? '-' : '+') : '\0';
	util_num(buf + (buf[0] != '\0'), mag);
	return buf;
}

static const char *
diff_plural(int64_t n, const char *one, const char *many)
{
	return n == 1 || n == -1 ? one : many;
}

/* "old:  FILE, snapshot 1 of 4 (sigusr1), pid 123, at 1,503 ms, command ./server" */
static void
diff_text_snap(FILE *f, const char *what, const struct jt_diff_snap *s)
{
	struct json_object *m;
	const char *reason = diff_json_str(s->snap, "reason"), *cmd = diff_json_str(s->snap, "command");
	char a[32];

	fprintf(f, "%s  %s, snapshot %u of %u (%s)", what, s->file, s->index, s->count,
		reason ? reason : "no reason given");
	if (json_object_object_get_ex(s->snap, "pid", &m))
		fprintf(f, ", pid %d", json_object_get_int(m));
	if (json_object_object_get_ex(s->snap, "time_ms", &m) && json_object_is_type(m, json_type_int))
		fprintf(f, ", at %s ms", diff_num(a, json_object_get_uint64(m), 0));
	if (cmd)
		fprintf(f, ", command %s", cmd);
	fputc('\n', f);
}

/*
 * The frames of a row, valgrind style but without addresses (they differ
 * between runs, and a row may sum stacks at several), each named by
 * report_frame_label as the report named it (a C++ function short unless
 * full, cxxname.h):
 *     at remember (server.c:29)
 *     by __libc_start_main (in libc.so.6)
 *     by libfoo.so+0x1e40
 */
static void
diff_text_frames(FILE *f, struct json_object *frames, int full)
{
	size_t n = json_object_array_length(frames), i;
	char label[REPORT_LABEL_MAX], place[REPORT_PLACE_MAX];

	if (n == 0)
		fprintf(f, "    (no call stack was captured)\n");
	for (i = 0; i < n; i++) {
		struct jt_frame fr;

		char *name = NULL;

		diff_frame_of(json_object_array_get_idx(frames, i), &fr);
		if (fr.function && !full) {
			name = xmalloc(strlen(fr.function) + 1);
			cxxname_short(fr.function, name, strlen(fr.function) + 1);
			fr.name = name;
		}
		fprintf(f, "    %s %s%s", i ? "by" : "at", report_frame_label(&fr, label, sizeof(label)),
			report_frame_place(&fr, place, sizeof(place)));
		free(name);
		if (fr.inlined)
			fputs(" (inlined)", f);
		fputc('\n', f);
	}
	fputc('\n', f);
}

/* "#1: +25,600 bytes (+100 blocks): 51,200 -> 76,800 live bytes", a note for a stack only on one side, the frames. */
static void
diff_text_row(FILE *f, const struct jt_diff_row *r, unsigned rank, int full)
{
	char a[32], b[32], c[32], d[32];

	fprintf(f, "#%u: %s %s (%s %s): %s -> %s live bytes%s\n", rank,
		diff_num(a, (uint64_t)r->delta_bytes, 1), diff_plural(r->delta_bytes, "byte", "bytes"),
		diff_num(b, (uint64_t)r->delta_blocks, 1), diff_plural(r->delta_blocks, "block", "blocks"),
		diff_num(c, r->old_bytes, 0), diff_num(d, r->new_bytes, 0),
		!r->in_old ? " (a stack the old snapshot does not have)"
		: !r->in_new ? " (a stack the new snapshot does not have)" : "");
	diff_text_frames(f, r->frames, full);
}

/* Counts the rows that grew, shrank, and kept their live bytes, with the bytes gained and lost. */
static void
diff_count(const struct jt_diff *d, size_t *grew, size_t *shrank, uint64_t *gained, uint64_t *lost)
{
	size_t i;

	*grew = *shrank = 0;
	*gained = *lost = 0;
	for (i = 0; i < d->nrows; i++) {
		if (d->rows[i].delta_bytes > 0) {
			(*grew)++;
			*gained += (uint64_t)d->rows[i].delta_bytes;
		} else if (d->rows[i].delta_bytes < 0) {
			(*shrank)++;
			*lost += -(uint64_t)d->rows[i].delta_bytes;
		}
	}
}

static void
diff_text_header(FILE *f, const struct jt_diff *d)
{
	char a[32], b[32], c[32], e[32], g[32], h[32];

	fprintf(f, "==== jmptrace diff ====\n");
	diff_text_snap(f, "old:", &d->old);
	diff_text_snap(f, "new:", &d->new);
	fprintf(f, "live:  %s -> %s bytes (%s), %s -> %s blocks (%s)\n\n",
		diff_num(a, d->old.live_bytes, 0), diff_num(b, d->new.live_bytes, 0),
		diff_num(c, d->new.live_bytes - d->old.live_bytes, 1),
		diff_num(e, d->old.live_blocks, 0), diff_num(g, d->new.live_blocks, 0),
		diff_num(h, d->new.live_blocks - d->old.live_blocks, 1));
}

/*
 * The text diff (see diff.h): rows are in delta order, so the growth is the
 * front of d->rows and the shrinkage its end, read backwards.
 */
int
diff_write_text(FILE *f, const struct jt_diff *d, unsigned top)
{
	size_t grew, shrank, i, shown;
	uint64_t gained, lost;
	char a[32], b[32], c[32], e[32], g[32];

	diff_count(d, &grew, &shrank, &gained, &lost);
	diff_text_header(f, d);
	shown = grew < top ? grew : top;
	if (grew)
		fprintf(f, "top %zu of %zu %s that grew, by live bytes:\n\n", shown, grew,
			diff_plural((int64_t)grew, "stack", "stacks"));
	else
		fprintf(f, "no stack grew\n\n");
	for (i = 0; i < shown; i++)
		diff_text_row(f, &d->rows[i], (unsigned)i + 1, d->full_names);
	shown = shrank < top ? shrank : top;
	if (shrank)
		fprintf(f, "top %zu of %zu %s that shrank, by live bytes:\n\n", shown, shrank,
			diff_plural((int64_t)shrank, "stack", "stacks"));
	else
		fprintf(f, "no stack shrank\n\n");
	for (i = 0; i < shown; i++)
		diff_text_row(f, &d->rows[d->nrows - 1 - i], (unsigned)i + 1, d->full_names);
	fprintf(f, "SUMMARY: live bytes %s -> %s (%s); %zu %s grew by %s bytes, %zu shrank by %s bytes, "
		"%zu unchanged\n", diff_num(a, d->old.live_bytes, 0), diff_num(b, d->new.live_bytes, 0),
		diff_num(c, d->new.live_bytes - d->old.live_bytes, 1), grew,
		diff_plural((int64_t)grew, "stack", "stacks"), diff_num(e, gained, 0), shrank,
		diff_num(g, lost, 0), d->nrows - grew - shrank);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
