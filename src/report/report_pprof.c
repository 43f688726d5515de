/* report_pprof.c - the --pprof writer: the heap as a gzip-compressed profile.proto, as go tool pprof reads it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "heap.h"
#include "pb.h"
#include "report.h"
#include "report_common.h"
#include "report_leak.h"
#include "sym.h"
#include "table.h"
#include "unwind.h"
#include "util.h"

/* Field numbers of github.com/google/pprof/proto/profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2 };
enum {
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3, MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,
};
enum { LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4 };
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };
enum { FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4 };

/*
 * The sample types, in the order of every sample's values; inuse_space is
 * the default. The last two only when a leak check ran: what each stack
 * definitely lost, direct and indirect blocks as the cost definitely-lost
 * counts them (report_leak.h).
 */
static const char *const pprof_types[][2] = {
	{ "alloc_objects", "count" },
	{ "alloc_space", "bytes" },
	{ "inuse_objects", "count" },
	{ "inuse_space", "bytes" },
	{ "leaked_objects", "count" },
	{ "leaked_space", "bytes" },
};
#define PPROF_NVALUES 4
#define PPROF_NVALUES_LEAK 6
#define PPROF_DEFAULT_TYPE 3

/* One key of a deduplicating table: a, b, and str when it is a string. */
struct pprof_ent {
	uint64_t a, b;
	char *str;
};

/* Keys and the ids handed out in order from 1: the key of id is v[id - 1]. */
struct pprof_table {
	struct pprof_ent *v;
	size_t cap, n;
	struct jt_index index;	/* ids - 1 */
};

/* What the locations of one mapping were symbolized to: its has_* flags. */
struct pprof_resolved {
	int functions, filenames, lines, inlines;
};

/* One profile being built: the Profile's repeated fields, each in its own buffer until the end. */
struct pprof {
	const struct jt_snapshot *s;
	struct pb_buf head;	/* sample types, period, times, comments */
	struct pb_buf samples, locations, functions, strtab;
	struct pprof_table strs, funcs, locs;
	struct report_leak leak;	/* each stack's lost figures, when a check ran */
	unsigned nvalues;	/* PPROF_NVALUES, or PPROF_NVALUES_LEAK with a leak check's */
	struct jt_sym_mapping *maps;	/* sorted by start */
	size_t nmaps;
	size_t main_map;	/* index in maps of the executable: its mapping gets id 1 (pprof's mapping[0]) */
	struct pprof_resolved *resolved;	/* per mapping */
};

static uint32_t
pprof_hash(uint64_t a, uint64_t b, const char *str)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b + 0x632be59bd9b4e019ULL);

	if (str)
		h ^= table_hash_bytes(str, strlen(str));
	return (uint32_t)(h ^ (h >> 31));
}

/* A key being looked up in t. */
struct pprof_key {
	const struct pprof_table *t;
	uint64_t a, b;
	const char *str;
};

static int
pprof_equal(const void *arg, uint32_t id)
{
	const struct pprof_key *k = arg;
	const struct pprof_ent *e = &k->t->v[id];

	return e->a == k->a && e->b == k->b && (!k->str || strcmp(e->str, k->str) == 0);
}

/* Returns the id of the key, adding it with the next id if new; *added says which. */
static uint64_t
pprof_intern(struct pprof_table *t, uint64_t a, uint64_t b, const char *str, int *added)
{
	struct pprof_key k = { t, a, b, str };
	uint32_t hash = pprof_hash(a, b, str), id;

	if (!t->index.slots)
		index_init(&t->index, 256);
	id = index_find(&t->index, hash, pprof_equal, &k);
	*added = id == UINT32_MAX;
	if (!*added)
		return (uint64_t)id + 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n] = (struct pprof_ent){ a, b, str ? xstrdup(str) : NULL };
	index_add(&t->index, hash, (uint32_t)t->n);
	return ++t->n;
}

static void
pprof_table_free(struct pprof_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].str);
	free(t->v);
	index_free(&t->index);
}

/* The index of str in the string table (0, "", for NULL). */
static uint64_t
pprof_str(struct pprof *pp, const char *str)
{
	int added;
	uint64_t id;

	if (!str || !*str)
		return 0;
	id = pprof_intern(&pp->strs, 0, 0, str, &added);
	if (added)
		pb_bytes(&pp->strtab, PROFILE_STRING_TABLE, str, strlen(str));
	return id;	/* ids count from 1, and "" is entry 0 */
}

/*
 * The id of the function shown as name, whose full demangled name is
 * system_name, in file (may be NULL), added to the table when new. Two
 * overloads share a short name, never a system name: the key is the latter.
 */
static uint64_t
pprof_function(struct pprof *pp, const char *name, const char *system_name, const char *file)
{
	uint64_t sys = pprof_str(pp, system_name), f = pprof_str(pp, file);
	int added;
	uint64_t id = pprof_intern(&pp->funcs, sys, f, NULL, &added);

	if (added) {
		size_t m = pb_begin(&pp->functions, PROFILE_FUNCTION);

		pb_uint(&pp->functions, FUNCTION_ID, id);
		/* As pprof itself does for C++: the short name shown, the full one kept (-symbolize=demangle=full). */
		pb_uint(&pp->functions, FUNCTION_NAME, pprof_str(pp, name));
		pb_uint(&pp->functions, FUNCTION_SYSTEM_NAME, sys);
		pb_uint(&pp->functions, FUNCTION_FILENAME, f);
		pb_end(&pp->functions, m);
	}
	return id;
}

/* The index in maps of the mapping that holds addr, or -1. */
static long
pprof_map_index(const struct pprof *pp, uint64_t addr)
{
	size_t lo = 0, hi = pp->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < pp->maps[mid].start)
			hi = mid;
		else if (addr >= pp->maps[mid].limit)
			lo = mid + 1;
		else
			return (long)mid;
	}
	return -1;
}

/* The mapping id of maps[i]: the executable's is 1, the others follow by address. */
static uint64_t
pprof_map_id(const struct pprof *pp, size_t i)
{
	if (i == pp->main_map)
		return 1;
	return i < pp->main_map ? i + 2 : i + 1;
}

/* Writes one Location: pc, its mapping, and a Line per source-level frame, innermost first. */
static void
pprof_location_write(struct pprof *pp, uint64_t id, uint64_t pc, long map,
		     const struct jt_frame *fr, int n)
{
	struct pb_buf *b = &pp->locations;
	size_t m = pb_begin(b, PROFILE_LOCATION);

	pb_uint(b, LOCATION_ID, id);
	if (map >= 0)
		pb_uint(b, LOCATION_MAPPING_ID, pprof_map_id(pp, (size_t)map));
	pb_uint(b, LOCATION_ADDRESS, pc);
	/*
	 * report_resolve's order is profile.proto's: the inlined frames
	 * first, the function that holds the code last.
	 */
	for (int k = 0; k < n; k++) {
		char label[REPORT_LABEL_MAX];
		size_t l = pb_begin(b, LOCATION_LINE);
		/* A frame without a symbol too: pprof would show "[module]", the other formats module+0xOFF. */
		const char *name = report_frame_label(&fr[k], label, sizeof(label));

		pb_uint(b, LINE_FUNCTION_ID, pprof_function(pp, name, fr[k].function ? fr[k].function : name,
							       fr[k].file));
		pb_uint(b, LINE_LINE, fr[k].line > 0 ? (uint64_t)fr[k].line : 0);
		pb_end(b, l);
	}
	pb_end(b, m);
}

/* Records in the mapping's flags what the frames of one of its locations know. */
static void
pprof_note_resolved(struct pprof_resolved *r, const struct jt_frame *fr, int n)
{
	/* Every frame gets a function name (report_frame_label): pprof must not look for others. */
	r->functions |= n > 0;
	for (int k = 0; k < n; k++) {
		r->filenames |= fr[k].file != NULL;
		r->lines |= fr[k].line > 0;
		/* Lines come from DWARF, which gives the inline scopes too. */
		r->inlines |= fr[k].line > 0 || fr[k].inlined;
	}
}

/*
 * The id of the Location of frame i of st, written when new. Locations
 * are one per pc as captured, apart from a pc above a signal frame, which
 * report_resolve looks up as it is rather than as a return address.
 */
static uint64_t
pprof_location(struct pprof *pp, const struct jt_stack *st, uint32_t i)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	uint64_t raw = st->pcs[i], pc = unwind_pc_addr(raw);
	int after_signal = i > 0 && (st->pcs[i - 1] & UNWIND_PC_SIGNAL);
	int is_ret = !(raw & UNWIND_PC_SIGNAL) && !after_signal;
	int added, n;
	uint64_t id = pprof_intern(&pp->locs, raw, (uint64_t)after_signal, NULL, &added);
	long map;

	if (!added)
		return id;
	n = report_resolve(pp->s->sym, st, i, fr);
	/* A return address may end its segment: the call lies before it. */
	map = pprof_map_index(pp, is_ret && pc ? pc - 1 : pc);
	if (map >= 0)
		pprof_note_resolved(&pp->resolved[map], fr, n);
	pprof_location_write(pp, id, pc, map, fr, n);
	return id;
}

/*
 * Writes one Sample per stack that allocated: its locations, leaf first,
 * and its values (six after a leak check). Suppressed stacks are in the
 * first four (a profile shows the memory in use, as the totals count it),
 * not in the leaked ones (suppressions are about leaks).
 */
static void
pprof_samples(struct pprof *pp)
{
	const struct jt_snapshot *s = pp->s;
	uint32_t n, *ids = report_rank(s->heap, HEAP_RANK_ALL, &n);
	uint64_t *locs = NULL;
	uint32_t cap = 0;

	for (uint32_t k = 0; k < n; k++) {
		const struct jt_stack *st = heap_stack_get(s->heap, ids[k]);
		uint64_t v[PPROF_NVALUES_LEAK] = { st->alloc_calls, st->alloc_bytes, st->live_blocks,
						   st->live_bytes, 0, 0 };
		size_t m;

		if (pp->nvalues > PPROF_NVALUES && st->id < pp->leak.nstacks) {
			v[4] = pp->leak.lost_blocks[st->id];
			v[5] = pp->leak.lost_bytes[st->id];
		}
		if (st->filtered || (!v[0] && !v[1] && !v[2] && !v[3]))
			continue;	/* outside --min-size/--max-size, or only invalid frees */
		if (st->depth > cap) {
			cap = st->depth;
			locs = xrealloc(locs, cap * sizeof(*locs));
		}
		for (uint32_t i = 0; i < st->depth; i++)
			locs[i] = pprof_location(pp, st, i);
		m = pb_begin(&pp->samples, PROFILE_SAMPLE);
		pb_packed(&pp->samples, SAMPLE_LOCATION_ID, locs, st->depth);
		pb_packed(&pp->samples, SAMPLE_VALUE, v, pp->nvalues);
		pb_end(&pp->samples, m);
	}
	free(locs);
	free(ids);
}

/* Writes a ValueType field of type and unit into b. */
static void
pprof_value_type(struct pprof *pp, struct pb_buf *b, unsigned field, const char *type, const char *unit)
{
	size_t m = pb_begin(b, field);

	pb_uint(b, VALUE_TYPE_TYPE, pprof_str(pp, type));
	pb_uint(b, VALUE_TYPE_UNIT, pprof_str(pp, unit));
	pb_end(b, m);
}

/*
 * The file of maps[i]; the executable's by the path it was run by, a
 * symlink's own name kept: pprof's "File:" names the program as ps does.
 */
static const char *
pprof_map_path(const struct pprof *pp, size_t i)
{
	const char *path = pp->maps[i].path;

	if (i == pp->main_map && pp->s->exe_named && pp->s->exe && strcmp(path, pp->s->exe) == 0)
		return pp->s->exe_named;
	return path;
}

/* Writes the Mapping of maps[i], with what its locations were symbolized to. */
static void
pprof_mapping(struct pprof *pp, struct pb_buf *b, size_t i)
{
	const struct jt_sym_mapping *mp = &pp->maps[i];
	const struct pprof_resolved *r = &pp->resolved[i];
	size_t m = pb_begin(b, PROFILE_MAPPING);

	pb_uint(b, MAPPING_ID, pprof_map_id(pp, i));
	pb_uint(b, MAPPING_MEMORY_START, mp->start);
	pb_uint(b, MAPPING_MEMORY_LIMIT, mp->limit);
	pb_uint(b, MAPPING_FILE_OFFSET, mp->file_offset);
	pb_uint(b, MAPPING_FILENAME, pprof_str(pp, pprof_map_path(pp, i)));
	pb_uint(b, MAPPING_BUILD_ID, pprof_str(pp, mp->build_id));
	/* Set, they tell pprof to leave the mapping as we symbolized it. */
	pb_uint(b, MAPPING_HAS_FUNCTIONS, (uint64_t)r->functions);
	pb_uint(b, MAPPING_HAS_FILENAMES, (uint64_t)r->filenames);
	pb_uint(b, MAPPING_HAS_LINE_NUMBERS, (uint64_t)r->lines);
	pb_uint(b, MAPPING_HAS_INLINE_FRAMES, (uint64_t)r->inlines);
	pb_end(b, m);
}

/* Writes the Mapping table in id order: the executable first (pprof takes mapping[0] as the main binary). */
static void
pprof_mappings(struct pprof *pp, struct pb_buf *b)
{
	if (pp->nmaps == 0)
		return;
	pprof_mapping(pp, b, pp->main_map);
	for (size_t i = 0; i < pp->nmaps; i++)
		if (i != pp->main_map)
			pprof_mapping(pp, b, i);
}

/* Finds the executable's mapping: the one from its file, else the lowest. */
static size_t
pprof_main_map(const struct pprof *pp)
{
	if (pp->s->exe)
		for (size_t i = 0; i < pp->nmaps; i++)
			if (strcmp(pp->maps[i].path, pp->s->exe) == 0)
				return i;
	return 0;
}

/* Writes the comment lines and the times: informational, pprof -comments and -raw show them. */
static void
pprof_header(struct pprof *pp)
{
	const struct jt_snapshot *s = pp->s;
	struct pb_buf *b = &pp->head;
	uint64_t dur = s->time_ms * 1000000ULL;
	char line[512];

	for (size_t i = 0; i < pp->nvalues; i++)
		pprof_value_type(pp, b, PROFILE_SAMPLE_TYPE, pprof_types[i][0], pprof_types[i][1]);
	snprintf(line, sizeof(line), "jmptrace: %s (pid %d), snapshot %u (%s)",
		 s->command ? s->command : "?", s->pid, s->seq, s->reason ? s->reason : "?");
	pb_uint(b, PROFILE_COMMENT, pprof_str(pp, line));
	/* The heap's clock starts with the tracing: the profile began time_ms ago. */
	pb_uint(b, PROFILE_TIME_NANOS, util_wall_ns() - dur);
	pb_uint(b, PROFILE_DURATION_NANOS, dur);
	pprof_value_type(pp, b, PROFILE_PERIOD_TYPE, "space", "bytes");
	pb_uint(b, PROFILE_PERIOD, 1);	/* every allocation is counted: nothing to scale */
	pb_uint(b, PROFILE_DEFAULT_SAMPLE_TYPE, pprof_str(pp, pprof_types[PPROF_DEFAULT_TYPE][0]));
}

/* Feeds what zs holds to deflate and writes what comes out to f, until deflate wants more input. */
static void
pprof_deflate(z_stream *zs, int flush, FILE *f)
{
	unsigned char out[1 << 16];

	do {
		zs->next_out = out;
		zs->avail_out = sizeof(out);
		deflate(zs, flush);
		fwrite(out, 1, sizeof(out) - zs->avail_out, f);
	} while (zs->avail_out == 0 || zs->avail_in);
}

/* Compresses the parts into f with a gzip header. Returns 0, or -1 when f has a write error. */
static int
pprof_gzip(FILE *f, struct pb_buf *const *parts, size_t nparts)
{
	z_stream zs = { 0 };

	/* windowBits 15 + 16: a gzip wrapper, as gzopen writes it, but into any stream. */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < nparts; i++) {
		/* avail_in is an unsigned int: hand it 1 MiB at a time. */
		for (size_t off = 0; off < parts[i]->len;) {
			size_t chunk = parts[i]->len - off < (1 << 20) ? parts[i]->len - off : (1 << 20);

			zs.next_in = parts[i]->p + off;
			zs.avail_in = (uInt)chunk;
			pprof_deflate(&zs, Z_NO_FLUSH, f);
			off += chunk;
		}
	}
	pprof_deflate(&zs, Z_FINISH, f);
	deflateEnd(&zs);
	return ferror(f) ? -1 : 0;
}

static void
pprof_free(struct pprof *pp)
{
	pb_free(&pp->head);
	pb_free(&pp->samples);
	pb_free(&pp->locations);
	pb_free(&pp->functions);
	pb_free(&pp->strtab);
	pprof_table_free(&pp->strs);
	pprof_table_free(&pp->funcs);
	pprof_table_free(&pp->locs);
	report_leak_free(&pp->leak);
	free(pp->maps);
	free(pp->resolved);
}

int
report_pprof(FILE *f, const struct jt_snapshot *s)
{
	struct pprof pp = { .s = s };
	struct pb_buf maps = { 0 };
	struct pb_buf *parts[] = { &pp.head, &maps, &pp.samples, &pp.locations, &pp.functions, &pp.strtab };
	int ret;

	/* string_table[0] must be "". */
	pb_bytes(&pp.strtab, PROFILE_STRING_TABLE, "", 0);
	if (s->sym)
		pp.maps = sym_mappings(s->sym, &pp.nmaps);
	pp.resolved = xcalloc(pp.nmaps ? pp.nmaps : 1, sizeof(*pp.resolved));
	pp.main_map = pprof_main_map(&pp);
	report_leak_init(&pp.leak, s);
	pp.nvalues = pp.leak.r ? PPROF_NVALUES_LEAK : PPROF_NVALUES;
	pprof_samples(&pp);
	pprof_header(&pp);
	pprof_mappings(&pp, &maps);
	ret = pprof_gzip(f, parts, ARRAY_SIZE(parts));
	pb_free(&maps);
	pprof_free(&pp);
	return ret;
}
