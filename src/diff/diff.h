/* diff.h - `jmptrace diff`: the stacks whose live bytes grew most between two JSON snapshots. */
#ifndef JT_DIFF_H
#define JT_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;
struct jt_outfile;
struct jt_frame;

/* Runs the subcommand; argv[0] is "diff". Returns the exit status (0, or 2 for bad usage, 1 on errors). */
int diff_main(int argc, char **argv);

/* One stack of a loaded snapshot, with the key it is matched by. */
struct jt_diff_stack {
	char *key;			/* see diff_stack_key; malloc'ed */
	uint64_t live_bytes, live_blocks;
	struct json_object *frames;	/* its "frames" array, owned by the snapshot's tree */
};

/* One snapshot of a JSON report, as diff reads it. */
struct jt_diff_snap {
	char *file;			/* the report's path as given; malloc'ed */
	unsigned index, count;		/* which snapshot it is (from 1), of how many in the file */
	struct json_object *root;	/* the whole file: owns every json_object below */
	struct json_object *snap;	/* the chosen snapshot (for reason, pid, command, time_ms) */
	struct json_object *merged;	/* format 2: its whole list of stacks, rebuilt (diff_load.c), or NULL */
	uint64_t live_bytes, live_blocks;	/* its totals, or its stacks' sums without totals */
	struct jt_diff_stack *stacks;
	size_t nstacks;
};

/*
 * One stack of the diff: a key found in either snapshot, with every stack of
 * that snapshot that has the key summed (several stacks differ only by
 * addresses or by frames the key leaves out).
 */
struct jt_diff_row {
	const char *key;			/* the stacks' key, owned by a snapshot */
	uint64_t old_bytes, old_blocks, new_bytes, new_blocks;
	int64_t delta_bytes, delta_blocks;	/* new minus old */
	int in_old, in_new;			/* whether either snapshot has the key at all */
	struct json_object *frames;		/* the new snapshot's frames, else the old one's */
};

/* A whole diff: both snapshots and their stacks matched, ordered by delta_bytes, highest first. */
struct jt_diff {
	struct jt_diff_snap old, new;
	struct jt_diff_row *rows;
	size_t nrows;
	int full_names;		/* --full-names: the text names C++ functions in full, as JSON has them */
};

/*
 * Splits a command-line argument "FILE" or "FILE:N" into a malloc'ed *path
 * and *index: N counts from 1, a negative N from the end (-1 is the last),
 * and no ":N" means the last (-1). An argument that names an existing file
 * is always FILE, even with a colon in it. Returns 0, or -1 (nothing
 * allocated) when N is 0 or the path is empty.
 */
int diff_spec_parse(const char *arg, char **path, long *index);

/*
 * Loads snapshot index (as diff_spec_parse gives it) of the JSON report at
 * path into *s. Returns 0, or -1 with a one-line reason in err (the file is
 * missing or unreadable, not JSON, not a jmptrace report, has no
 * snapshots, has no such snapshot); *s then holds nothing to free.
 */
int diff_load(const char *path, long index, struct jt_diff_snap *s, char *err, size_t len);

/*
 * diff_load for a report already parsed: takes ownership of root (put even
 * on failure). file is only copied, to name the snapshot in the output.
 */
int diff_snap_from_json(struct json_object *root, const char *file, long index,
			struct jt_diff_snap *s, char *err, size_t len);

/* The string member name of obj, or NULL when it is missing, null or not a string. */
const char *diff_json_str(struct json_object *obj, const char *name);

/*
 * The frame of a report's JSON frame object fr, for report_frame_label
 * (report_common.h) to name it as the report did: its strings point into
 * fr. A frame without a function in a report older than the "offset"
 * member is given no module: it is named by its address.
 */
void diff_frame_of(struct json_object *fr, struct jt_frame *out);

/* Frees what diff_load put into s. */
void diff_snap_free(struct jt_diff_snap *s);

/*
 * The key a stack is matched by: each frame in order as (function, basename
 * of file, line), so that two runs loaded at other addresses still match.
 * A frame without a function is its module's name alone: two such frames in
 * one module are taken as equal (the JSON has no module offset to tell
 * them apart). Returns a malloc'ed string.
 */
char *diff_stack_key(struct json_object *frames);

/*
 * Matches d->old's and d->new's stacks by key into d->rows (which it
 * allocates), summed per key, ordered by delta_bytes highest first (then
 * delta_blocks, then new bytes, then key, so the order is stable).
 */
void diff_compute(struct jt_diff *d);

/* Frees d->rows and both snapshots. */
void diff_free(struct jt_diff *d);

/*
 * The text diff: a header naming both snapshots and the total live bytes
 * and blocks old -> new, the top stacks that grew (most first), the top that
 * shrank (most first), then a SUMMARY line. Returns 0 or -1 on a write error.
 */
int diff_write_text(FILE *f, const struct jt_diff *d, unsigned top);

/*
 * The diff as JSON to out (outfile.h: a file is replaced whole, a stream
 * written): "old" and "new" name the snapshots, "live_bytes_delta" and
 * "live_blocks_delta" the totals' change, "stacks" every row in d's order.
 * Returns 0, or -1 with errno set.
 */
int diff_write_json(struct jt_outfile *out, const struct jt_diff *d);

#endif
