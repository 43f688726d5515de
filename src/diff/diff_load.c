/* diff_load.c - reads one snapshot of a JSON report for `jmptrace diff`, and keys its stacks. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "diff.h"
#include "report_common.h"
#include "sym.h"
#include "util.h"

int
diff_spec_parse(const char *arg, char **path, long *index)
{
	const char *colon = strrchr(arg, ':');
	const char *p;
	char *end;
	long n;

	*index = -1;
	/* "FILE:N" only when N is a number and FILE is not itself the whole name. */
	if (colon && colon != arg && access(arg, F_OK) != 0) {
		p = colon + 1;
		if (*p == '-')
			p++;
		if (*p >= '0' && *p <= '9' && strspn(p, "0123456789") == strlen(p)) {
			errno = 0;
			n = strtol(colon + 1, &end, 10);
			if (n == 0 || errno)
				return -1;
			*index = n;
			*path = xmalloc((size_t)(colon - arg) + 1);
			memcpy(*path, arg, (size_t)(colon - arg));
			(*path)[colon - arg] = '\0';
			return 0;
		}
	}
	if (!*arg)
		return -1;
	*path = xstrdup(arg);
	return 0;
}

/* Where parsing stands in the file: the first character that is not a blank, and the line and column. */
struct diff_pos {
	char first;		/* '\0' until one is seen */
	unsigned line, col;	/* from 1 */
};

/* Takes in buf[0..n), of which the tokener took buf[0..took). */
static void
diff_pos_advance(struct diff_pos *p, const char *buf, size_t n, size_t took)
{
	for (size_t i = 0; i < n && !p->first; i++)
		if (!isspace((unsigned char)buf[i]))
			p->first = buf[i];
	for (size_t i = 0; i < took; i++) {
		if (buf[i] == '\n') {
			p->line++;
			p->col = 1;
		} else {
			p->col++;
		}
	}
}

/*
 * Says in our words why the file is not JSON: most often it is the text
 * report (-o) given for the --json file, which the first character tells.
 */
static void
diff_not_json(const struct diff_pos *p, char *err, size_t len)
{
	if (p->first && p->first != '{' && p->first != '[' && isprint((unsigned char)p->first))
		snprintf(err, len, "not JSON: it begins with '%c', a JSON report with '{' "
			 "(jmptrace diff reads the files that --json writes)", p->first);
	else if (p->first && p->first != '{' && p->first != '[')
		snprintf(err, len, "not JSON: it begins with the byte 0x%02x, a JSON report with '{' "
			 "(jmptrace diff reads the files that --json writes)", (unsigned char)p->first);
	else
		snprintf(err, len, "not JSON: a syntax error at line %u, column %u", p->line, p->col);
}

/*
 * Parses the whole of fd as one JSON value with json-c's incremental
 * tokener (so that the place of an error can be given). Returns the value,
 * or NULL with a reason in err.
 */
static struct json_object *
diff_parse_fd(int fd, char *err, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj = NULL;
	enum json_tokener_error e = json_tokener_continue;
	struct diff_pos pos = { '\0', 1, 1 };
	char buf[65536];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		obj = json_tokener_parse_ex(tok, buf, (int)n);
		e = json_tokener_get_error(tok);
		diff_pos_advance(&pos, buf, (size_t)n,
				 e == json_tokener_continue ? (size_t)n : json_tokener_get_parse_end(tok));
		if (e != json_tokener_continue)
			break;
	}
	if (n < 0)
		snprintf(err, len, "%s", strerror(errno));
	else if (e == json_tokener_continue && !pos.first)
		snprintf(err, len, "not JSON: the file is empty");
	else if (e == json_tokener_continue)
		snprintf(err, len, "not JSON (the file ends before the value does)");
	else if (e != json_tokener_success)
		diff_not_json(&pos, err, len);
	if (n < 0 || e != json_tokener_success) {
		json_object_put(obj);
		obj = NULL;
	}
	json_tokener_free(tok);
	return obj;
}

int
diff_load(const char *path, long index, struct jt_diff_snap *s, char *err, size_t len)
{
	struct json_object *root;
	char why[200];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	memset(s, 0, sizeof(*s));
	if (fd < 0) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	root = diff_parse_fd(fd, why, sizeof(why));
	close(fd);
	if (!root) {
		snprintf(err, len, "%s: %s", path, why);
		return -1;
	}
	return diff_snap_from_json(root, path, index, s, err, len);
}

/* The unsigned integer member name of obj into *v; returns 0, or -1 when it is missing or no integer. */
static int
diff_get_u64(struct json_object *obj, const char *name, uint64_t *v)
{
	struct json_object *m;

	if (!json_object_object_get_ex(obj, name, &m) || !json_object_is_type(m, json_type_int))
		return -1;
	*v = json_object_get_uint64(m);
	return 0;
}

const char *
diff_json_str(struct json_object *obj, const char *name)
{
	struct json_object *m;

	if (!json_object_object_get_ex(obj, name, &m) || !json_object_is_type(m, json_type_string))
		return NULL;
	return json_object_get_string(m);
}

static const char *
diff_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void
diff_frame_of(struct json_object *fr, struct jt_frame *out)
{
	const char *addr = diff_json_str(fr, "address"), *off = diff_json_str(fr, "offset");
	struct json_object *m;

	memset(out, 0, sizeof(*out));
	out->function = diff_json_str(fr, "function");
	out->file = diff_json_str(fr, "file");
	out->address = addr ? strtoull(addr, NULL, 16) : 0;
	out->module = diff_json_str(fr, "module");
	if (off)
		out->offset = strtoull(off, NULL, 16);
	else if (!out->function)
		out->module = NULL;	/* "module+0x0" would be wrong: name it by its address */
	if (out->file && json_object_object_get_ex(fr, "line", &m))
		out->line = json_object_get_int(m);
	out->inlined = json_object_object_get_ex(fr, "inlined", &m) && json_object_get_boolean(m);
	out->signal_frame = out->function && strcmp(out->function, REPORT_SIGNAL_FRAME) == 0;
}

char *
diff_stack_key(struct json_object *frames)
{
	size_t n = json_object_array_length(frames), i, len = 0, cap = 64;
	char *key = xmalloc(cap), label[REPORT_LABEL_MAX];

	key[0] = '\0';
	for (i = 0; i < n; i++) {
		struct jt_frame fr;
		size_t need;

		diff_frame_of(json_object_array_get_idx(frames, i), &fr);
		/* Fields are split by \x1f and frames by \x1e: neither is in a name. */
		need = strlen(fr.function ? fr.function : "") + strlen(fr.file ? fr.file : "") + sizeof(label) + 32;
		if (len + need > cap) {
			cap = 2 * (len + need);
			key = xrealloc(key, cap);
		}
		if (fr.function)
			len += (size_t)snprintf(key + len, cap - len, "f\x1f%s\x1f%s\x1f%d\x1e", fr.function,
						fr.file ? diff_basename(fr.file) : "", fr.line);
		else
			len += (size_t)snprintf(key + len, cap - len, "m\x1f%s\x1e",
						report_frame_label(&fr, label, sizeof(label)));
	}
	return key;
}

/*
 * Format 2 (doc/formats.md): a snapshot lists only the stacks that changed
 * since the previous snapshot of its "heap", and a stack's frames are in its
 * first entry. The snapshot's whole list, in place of its "stacks", is each
 * stack's latest entry up to it, with the frames of its first.
 */
struct diff_entry {
	uint64_t id, live_bytes, live_blocks;
	struct json_object *st, *frames;
};

/* The format-1 order: live stacks by live bytes, blocks, id; then the others by id. */
static int
diff_entry_cmp(const void *a, const void *b)
{
	const struct diff_entry *x = a, *y = b;

	if (!x->live_blocks != !y->live_blocks)
		return x->live_blocks ? -1 : 1;
	if (x->live_bytes != y->live_bytes)
		return x->live_bytes > y->live_bytes ? -1 : 1;
	if (x->live_blocks != y->live_blocks)
		return x->live_blocks > y->live_blocks ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Folds snapshot snap's "stacks" into *ents (indexed by id, *n of them); returns 0, or -1 when one has no id. */
static int
diff_fold(struct json_object *snap, struct diff_entry **ents, uint64_t *n)
{
	struct json_object *stacks, *frames;
	uint64_t id;

	if (!json_object_object_get_ex(snap, "stacks", &stacks) || !json_object_is_type(stacks, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(stacks); i++) {
		struct json_object *st = json_object_array_get_idx(stacks, i);

		if (diff_get_u64(st, "id", &id) < 0 || id > UINT32_MAX)
			return -1;
		if (id >= *n) {
			*ents = xrealloc(*ents, (id + 1) * sizeof(**ents));
			memset(*ents + *n, 0, (id + 1 - *n) * sizeof(**ents));
			*n = id + 1;
		}
		(*ents)[id].id = id;
		(*ents)[id].st = st;
		if (json_object_object_get_ex(st, "frames", &frames))
			(*ents)[id].frames = frames;
	}
	return 0;
}

/* Adds snapshot snap's "new_frames" to the file's frame table (an array that refers to the file's objects). */
static void
diff_table_add(struct json_object *table, struct json_object *snap)
{
	struct json_object *nf;

	if (!json_object_object_get_ex(snap, "new_frames", &nf) || !json_object_is_type(nf, json_type_array))
		return;
	for (size_t i = 0; i < json_object_array_length(nf); i++)
		json_object_array_add(table, json_object_get(json_object_array_get_idx(nf, i)));
}

/* A stack's "frames", numbers in the frame table, as the array of frame objects; NULL when one is not in it. */
static struct json_object *
diff_frames_of(struct json_object *ids, struct json_object *table)
{
	struct json_object *out = json_object_new_array(), *fr;
	size_t n = json_object_array_length(table);

	for (size_t i = 0; i < json_object_array_length(ids); i++) {
		int64_t k = json_object_get_int64(json_object_array_get_idx(ids, i));

		if (k < 0 || (uint64_t)k >= n || !(fr = json_object_array_get_idx(table, (size_t)k))) {
			json_object_put(out);
			return NULL;
		}
		json_object_array_add(out, json_object_get(fr));
	}
	return out;
}

/* Rebuilds s's whole list of stacks into s->merged, a new array of objects that refer to the file's. */
static int
diff_merge(struct jt_diff_snap *s, struct json_object *snaps, char *err, size_t len)
{
	struct json_object *heap = NULL, *h, *table = json_object_new_array(), *frames;
	struct diff_entry *ents = NULL;
	uint64_t n = 0, k = 0, i;

	json_object_object_get_ex(s->snap, "heap", &heap);
	for (i = 0; i < s->index; i++) {
		struct json_object *o = json_object_array_get_idx(snaps, i);

		diff_table_add(table, o);
		if (!json_object_object_get_ex(o, "heap", &h) || !heap
		    || json_object_get_int64(h) != json_object_get_int64(heap))
			continue;
		if (diff_fold(o, &ents, &n) < 0) {
			snprintf(err, len, "%s: snapshot %" PRIu64 " has a stack without an \"id\"", s->file, i + 1);
			free(ents);
			json_object_put(table);
			return -1;
		}
	}
	for (i = 0; i < n; i++) {
		if (!ents[i].st)
			continue;
		diff_get_u64(ents[i].st, "live_bytes", &ents[i].live_bytes);
		diff_get_u64(ents[i].st, "live_blocks", &ents[i].live_blocks);
		ents[k++] = ents[i];
	}
	qsort(ents, k, sizeof(*ents), diff_entry_cmp);
	s->merged = json_object_new_array();
	for (i = 0; i < k; i++) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "live_bytes", json_object_new_uint64(ents[i].live_bytes));
		json_object_object_add(o, "live_blocks", json_object_new_uint64(ents[i].live_blocks));
		json_object_array_add(s->merged, o);
		if (!ents[i].frames || !(frames = diff_frames_of(ents[i].frames, table))) {
			snprintf(err, len, "%s: snapshot %u: stack %" PRIu64 " has no frames, or frames that no "
				 "\"new_frames\" before it gave", s->file, s->index, ents[i].id);
			free(ents);
			json_object_put(table);
			return -1;
		}
		json_object_object_add(o, "frames", frames);
	}
	free(ents);
	json_object_put(table);
	return 0;
}

/* Reads the stacks of snapshot s->snap (of the file's snaps); returns 0, or -1 with a reason in err. */
static int
diff_read_stacks(struct jt_diff_snap *s, struct json_object *snaps, char *err, size_t len)
{
	struct json_object *stacks, *frames, *format;
	size_t n, i;

	if (json_object_object_get_ex(s->root, "format", &format) && json_object_get_int(format) >= 2) {
		if (diff_merge(s, snaps, err, len) < 0)
			return -1;
		stacks = s->merged;
	} else if (!json_object_object_get_ex(s->snap, "stacks", &stacks)
		   || !json_object_is_type(stacks, json_type_array)) {
		snprintf(err, len, "%s: snapshot %u has no \"stacks\" array", s->file, s->index);
		return -1;
	}
	n = json_object_array_length(stacks);
	s->stacks = xcalloc(n + 1, sizeof(*s->stacks));
	for (i = 0; i < n; i++) {
		struct json_object *st = json_object_array_get_idx(stacks, i);
		struct jt_diff_stack *d = &s->stacks[i];

		if (!json_object_is_type(st, json_type_object)
		    || diff_get_u64(st, "live_bytes", &d->live_bytes) < 0
		    || diff_get_u64(st, "live_blocks", &d->live_blocks) < 0
		    || !json_object_object_get_ex(st, "frames", &frames)
		    || !json_object_is_type(frames, json_type_array)) {
			snprintf(err, len, "%s: snapshot %u: stack %zu has no live_bytes, live_blocks "
				 "or frames", s->file, s->index, i + 1);
			return -1;
		}
		d->frames = frames;
		d->key = diff_stack_key(frames);
		s->nstacks = i + 1;
	}
	return 0;
}

/* The snapshot's live totals: "totals" when there (it counts what --min-size left out), else the stacks' sums. */
static void
diff_read_totals(struct jt_diff_snap *s)
{
	struct json_object *t;
	size_t i;

	if (json_object_object_get_ex(s->snap, "totals", &t)
	    && diff_get_u64(t, "live_bytes", &s->live_bytes) == 0
	    && diff_get_u64(t, "live_blocks", &s->live_blocks) == 0)
		return;
	s->live_bytes = s->live_blocks = 0;
	for (i = 0; i < s->nstacks; i++) {
		s->live_bytes += s->stacks[i].live_bytes;
		s->live_blocks += s->stacks[i].live_blocks;
	}
}

int
diff_snap_from_json(struct json_object *root, const char *file, long index,
		    struct jt_diff_snap *s, char *err, size_t len)
{
	struct json_object *snaps;
	size_t count;

	memset(s, 0, sizeof(*s));
	s->root = root;
	s->file = xstrdup(file);
	if (!json_object_is_type(root, json_type_object)
	    || !json_object_object_get_ex(root, "snapshots", &snaps)
	    || !json_object_is_type(snaps, json_type_array)) {
		snprintf(err, len, "%s: not a jmptrace JSON report (no \"snapshots\" array)", file);
		goto fail;
	}
	count = json_object_array_length(snaps);
	if (count == 0) {
		snprintf(err, len, "%s: the report has no snapshots", file);
		goto fail;
	}
	if ((index > 0 && (size_t)index > count) || (index < 0 && (size_t)-index > count)) {
		snprintf(err, len, "%s: no snapshot %ld: the report has %zu", file, index, count);
		goto fail;
	}
	s->count = (unsigned)count;
	s->index = index > 0 ? (unsigned)index : (unsigned)(count + 1 - (size_t)-index);
	s->snap = json_object_array_get_idx(snaps, s->index - 1);
	if (!json_object_is_type(s->snap, json_type_object)) {
		snprintf(err, len, "%s: snapshot %u is not an object", file, s->index);
		goto fail;
	}
	if (diff_read_stacks(s, snaps, err, len) < 0)
		goto fail;
	diff_read_totals(s);
	return 0;
fail:
	diff_snap_free(s);
	return -1;
}

void
diff_snap_free(struct jt_diff_snap *s)
{
	size_t i;

	for (i = 0; i < s->nstacks; i++)
		free(s->stacks[i].key);
	free(s->stacks);
	free(s->file);
	json_object_put(s->merged);
	json_object_put(s->root);
	memset(s, 0, sizeof(*s));
}
