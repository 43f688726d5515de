/* diff.c - `jmptrace diff`: the command line, and matching two snapshots' stacks by their keys. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "diff.h"
#include "outfile.h"
#include "util.h"

#define DIFF_USAGE "jmptrace diff [--top N] [--json FILE] [--full-names] OLD.json[:N] NEW.json[:N]"

/* One stack of either snapshot, for sorting both together by key. */
struct diff_entry {
	const struct jt_diff_stack *st;
	int is_new;
};

static int
diff_entry_cmp(const void *a, const void *b)
{
	const struct diff_entry *x = a, *y = b;
	int c = strcmp(x->st->key, y->st->key);

	/* Within a key, old stacks first: a row takes the first new stack's frames. */
	return c ? c : x->is_new - y->is_new;
}

#define DIFF_CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

/* Highest delta_bytes first; ties broken so that the order never depends on the files' order. */
static int
diff_row_cmp(const void *a, const void *b)
{
	const struct jt_diff_row *x = a, *y = b;
	int c;

	if ((c = DIFF_CMP(y->delta_bytes, x->delta_bytes)) != 0
	    || (c = DIFF_CMP(y->delta_blocks, x->delta_blocks)) != 0
	    || (c = DIFF_CMP(y->new_bytes, x->new_bytes)) != 0)
		return c;
	return strcmp(x->key, y->key);
}

/* Adds stack e to row r (a new row when r has no key yet). */
static void
diff_row_add(struct jt_diff_row *r, const struct diff_entry *e)
{
	if (!r->key)
		r->key = e->st->key;
	if (e->is_new) {
		if (!r->in_new)
			r->frames = e->st->frames;
		r->in_new = 1;
		r->new_bytes += e->st->live_bytes;
		r->new_blocks += e->st->live_blocks;
	} else {
		if (!r->in_old && !r->in_new)
			r->frames = e->st->frames;
		r->in_old = 1;
		r->old_bytes += e->st->live_bytes;
		r->old_blocks += e->st->live_blocks;
	}
}

void
diff_compute(struct jt_diff *d)
{
	size_t n = d->old.nstacks + d->new.nstacks, i, k = 0;
	struct diff_entry *e = xcalloc(n, sizeof(*e));

	for (i = 0; i < d->old.nstacks; i++)
		e[k++] = (struct diff_entry){ &d->old.stacks[i], 0 };
	for (i = 0; i < d->new.nstacks; i++)
		e[k++] = (struct diff_entry){ &d->new.stacks[i], 1 };
	qsort(e, n, sizeof(*e), diff_entry_cmp);
	d->rows = xcalloc(n, sizeof(*d->rows));
	d->nrows = 0;
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(e[i].st->key, e[i - 1].st->key) != 0)
			d->nrows++;
		diff_row_add(&d->rows[d->nrows], &e[i]);
	}
	if (n)
		d->nrows++;
	for (i = 0; i < d->nrows; i++) {
		struct jt_diff_row *r = &d->rows[i];

		/* Two's complement: a shrink comes out negative. */
		r->delta_bytes = (int64_t)(r->new_bytes - r->old_bytes);
		r->delta_blocks = (int64_t)(r->new_blocks - r->old_blocks);
	}
	qsort(d->rows, d->nrows, sizeof(*d->rows), diff_row_cmp);
	free(e);
}

void
diff_free(struct jt_diff *d)
{
	free(d->rows);
	d->rows = NULL;
	d->nrows = 0;
	diff_snap_free(&d->old);
	diff_snap_free(&d->new);
}

/* The program part of a snapshot's command line: its first word's base name, into buf; NULL without a command. */
static const char *
diff_program(const struct jt_diff_snap *s, char *buf, size_t len)
{
	const char *cmd = diff_json_str(s->snap, "command"), *slash;

	if (!cmd)
		return NULL;
	snprintf(buf, len, "%.*s", (int)strcspn(cmd, " \t"), cmd);
	slash = strrchr(buf, '/');
	return slash ? slash + 1 : buf;
}

/* The snapshot's pid, or 0 when the report has none. */
static int
diff_pid(const struct jt_diff_snap *s)
{
	struct json_object *m;

	return json_object_object_get_ex(s->snap, "pid", &m) ? json_object_get_int(m) : 0;
}

/* Whether both snapshots come from one report file, that is from one run. */
static int
diff_same_file(const struct jt_diff *d)
{
	struct stat a, b;

	if (stat(d->old.file, &a) < 0 || stat(d->new.file, &b) < 0)
		return strcmp(d->old.file, d->new.file) == 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/*
 * Warns in one line when the snapshots are of two programs, or of two
 * processes of one run (with -f, a parent and its forked child): the diff is
 * made all the same, but its growth is then no one process's growth.
 */
static void
diff_warn_unlike(const struct jt_diff *d)
{
	const char *oe = diff_json_str(d->old.snap, "exe"), *ne = diff_json_str(d->new.snap, "exe");
	char ob[256], nb[256];
	const char *op = diff_program(&d->old, ob, sizeof(ob)), *np = diff_program(&d->new, nb, sizeof(nb));
	int opid = diff_pid(&d->old), npid = diff_pid(&d->new);

	/*
	 * The executables decide when both reports have them (one file run by two
	 * names is one program); the names say which, unless only the paths differ.
	 */
	if (oe && ne && strcmp(oe, ne) == 0)
		op = np = NULL;
	else if (oe && ne && (!op || !np || strcmp(op, np) == 0))
		op = oe, np = ne;
	else if (!op || !np || strcmp(op, np) == 0)
		op = np = NULL;
	if (op)
		error_msg("diff: warning: the snapshots are of different programs, %s (pid %d) and %s (pid %d)",
			  op, opid, np, npid);
	else if (opid != npid && diff_same_file(d))
		error_msg("diff: warning: the snapshots are of different processes of one run, pid %d and pid %d "
			  "(a parent and its child?)", opid, npid);
}

/* Loads one "FILE[:N]" argument; returns 0, or the exit status after one line on stderr. */
static int
diff_load_arg(const char *arg, struct jt_diff_snap *s)
{
	char err[512], *path;
	long index;
	int r;

	if (diff_spec_parse(arg, &path, &index) < 0) {
		error_msg("diff: '%s': give FILE or FILE:N, N from 1 (or from -1 at the end)", arg);
		return 2;
	}
	r = diff_load(path, index, s, err, sizeof(err));
	free(path);
	if (r < 0) {
		error_msg("diff: %s", err);
		return 1;
	}
	return 0;
}

/* --top's value: a whole number. */
static int
diff_parse_top(const char *arg, unsigned *top)
{
	char *end;
	unsigned long v;

	if (*arg < '0' || *arg > '9')
		return -1;
	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return -1;
	*top = (unsigned)v;
	return 0;
}

/* Parses the options into *top, *json and *full; returns -1 to go on, else the exit status (0 after --help). */
static int
diff_options(int argc, char **argv, unsigned *top, const char **json, int *full)
{
	static const struct option opts[] = {
		{ "top", required_argument, NULL, 't' },
		{ "json", required_argument, NULL, 'j' },
		{ "full-names", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	/* getopt's messages begin with argv[0]: make them "jmptrace: diff: ...". */
	argv[0] = "jmptrace: diff";
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 't' && diff_parse_top(optarg, top) < 0) {
			error_msg("diff: --top: give a number, not '%s'", optarg);
			return 2;
		} else if (c == 'j') {
			*json = optarg;
		} else if (c == 'F') {
			*full = 1;
		} else if (c == 'h') {
			printf("usage: %s\n", DIFF_USAGE);
			return 0;
		} else if (c == '?') {
			try_help_msg("jmptrace diff");
			return 2;
		}
	}
	if (argc - optind != 2) {
		error_msg("diff: give two snapshots, OLD.json[:N] NEW.json[:N]");
		try_help_msg("jmptrace diff");
		return 2;
	}
	return -1;
}

int
diff_main(int argc, char **argv)
{
	struct jt_diff d = { 0 };
	struct jt_outfile *out = NULL;
	const char *json = NULL;
	unsigned top = 10;
	int r;

	r = diff_options(argc, argv, &top, &json, &d.full_names);
	if (r >= 0)
		return r;
	/* Before the reports are read: a path that cannot be written is said first. */
	if (json && !(out = outfile_open(json))) {
		perror_msg("diff: cannot write '%s'", json);
		return 1;
	}
	if ((r = diff_load_arg(argv[optind], &d.old)) != 0
	    || (r = diff_load_arg(argv[optind + 1], &d.new)) != 0) {
		diff_free(&d);
		outfile_close(out);
		return r;
	}
	diff_warn_unlike(&d);
	diff_compute(&d);
	r = 0;
	/* --json - makes standard output the JSON's alone. */
	if (!(json && strcmp(json, "-") == 0) && diff_write_text(stdout, &d, top) < 0) {
		perror_msg("diff: cannot write the diff");
		r = 1;
	}
	if (json && diff_write_json(out, &d) < 0) {
		perror_msg("diff: cannot write '%s'", json);
		r = 1;
	}
	outfile_close(out);
	diff_free(&d);
	return r;
}
