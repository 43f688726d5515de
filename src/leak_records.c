/* leak_records.c - groups classified blocks into memcheck's loss records, in its order, and sums the LEAK SUMMARY. */
#include <stdlib.h>
#include <string.h>

#include "leak.h"

/* Open addressing from (stack, kind) to a record: slot holds record index + 1, 0 when free. */
struct lr_table {
	uint32_t *slot;
	size_t mask;
	struct leak_record *rec;
	size_t nrec, cap;
};

static size_t
lr_hash(uint32_t stack_id, unsigned kind)
{
	uint64_t k = ((uint64_t)stack_id << 2 | kind) * 0x9e3779b97f4a7c15ull;

	return (size_t)(k >> 32);
}

/* The record of (stack_id, kind), added when new; NULL when out of memory. */
static struct leak_record *
lr_get(struct lr_table *t, uint32_t stack_id, unsigned kind)
{
	size_t h = lr_hash(stack_id, kind) & t->mask;
	struct leak_record *r;

	for (; t->slot[h]; h = (h + 1) & t->mask) {
		r = &t->rec[t->slot[h] - 1];
		if (r->stack_id == stack_id && r->kind == (enum leak_kind)kind)
			return r;
	}
	if (t->nrec == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct leak_record *nr = realloc(t->rec, cap * sizeof(*nr));

		if (!nr)
			return NULL;
		t->rec = nr;
		t->cap = cap;
	}
	r = &t->rec[t->nrec++];
	memset(r, 0, sizeof(*r));
	r->stack_id = stack_id;
	r->kind = (enum leak_kind)kind;
	t->slot[h] = (uint32_t)t->nrec;
	return r;
}

/* valgrind's cmp_LossRecords: total bytes, then kind, then blocks, then the stack. */
static int
lr_cmp(const void *a, const void *b)
{
	const struct leak_record *x = a, *y = b;
	uint64_t tx = x->bytes + x->ind_bytes, ty = y->bytes + y->ind_bytes;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks < y->blocks ? -1 : 1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static void
lr_summary(const struct leak_block *b, size_t n, struct leak_result *out)
{
	size_t i;

	memset(out->bytes, 0, sizeof(out->bytes));
	memset(out->blocks, 0, sizeof(out->blocks));
	memset(out->heur_bytes, 0, sizeof(out->heur_bytes));
	memset(out->heur_blocks, 0, sizeof(out->heur_blocks));
	for (i = 0; i < out->nrecords; i++) {
		out->records[i].number = (uint32_t)(i + 1);
		out->bytes[out->records[i].kind] += out->records[i].bytes;
		out->blocks[out->records[i].kind] += out->records[i].blocks;
	}
	/* As memcheck: every block whose heuristic field is set, whatever its kind. */
	for (i = 0; i < n; i++) {
		if (b[i].heur && b[i].heur <= LEAK_NHEUR) {
			out->heur_bytes[b[i].heur - 1] += b[i].size;
			out->heur_blocks[b[i].heur - 1]++;
		}
	}
}

int
leak_records(const struct leak_block *b, size_t n, struct leak_result *out)
{
	struct lr_table t = { 0 };
	size_t i, nslot = 64;

	while (nslot < 2 * n)
		nslot <<= 1;
	t.slot = calloc(nslot, sizeof(*t.slot));
	if (!t.slot)
		return -1;
	t.mask = nslot - 1;
	for (i = 0; i < n; i++) {
		struct leak_record *r = lr_get(&t, b[i].stack_id, b[i].kind);

		if (!r) {
			free(t.slot);
			free(t.rec);
			return -1;
		}
		r->bytes += b[i].size;
		r->blocks++;
		/* Only a clique's leader carries what it loses indirectly (memcheck: Unreached only). */
		if (b[i].kind == LEAK_DEFINITE) {
			r->ind_bytes += b[i].ind_bytes;
			r->ind_blocks += b[i].ind_blocks;
		}
	}
	free(t.slot);
	if (t.nrec)
		qsort(t.rec, t.nrec, sizeof(*t.rec), lr_cmp);
	free(out->records);
	out->records = t.rec;
	out->nrecords = t.nrec;
	lr_summary(b, n, out);
	return 0;
}
