/* leak_records.c - groups classified blocks into memcheck's loss records, in its order, and sums the LEAK SUMMARY. */
#include <stdlib.h>
#include <string.h>

#include "leak.h"
#include "table.h"
#include "util.h"

/* The records, and where each (stack, kind) has its record. */
struct lr_table {
	struct jt_table index;	/* (stack << 2 | kind) + 1 -> index in rec */
	struct leak_record *rec;
	size_t nrec, cap;
};

/* The record of (stack_id, kind), added when new. */
static struct leak_record *
lr_get(struct lr_table *t, uint32_t stack_id, unsigned kind)
{
	struct leak_record *r;
	struct jt_slot *s;
	int fresh;

	/* + 1: the table's keys are not zero. */
	s = table_claim(&t->index, ((uint64_t)stack_id << 2 | kind) + 1, &fresh);
	if (!fresh)
		return &t->rec[s->val];
	if (t->nrec == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->rec = xrealloc(t->rec, t->cap * sizeof(*t->rec));
	}
	r = &t->rec[t->nrec++];
	memset(r, 0, sizeof(*r));
	r->stack_id = stack_id;
	r->kind = (enum leak_kind)kind;
	s->val = t->nrec - 1;
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
	size_t i;

	table_init(&t.index, 64, 0);
	for (i = 0; i < n; i++) {
		struct leak_record *r = lr_get(&t, b[i].stack_id, b[i].kind);

		r->bytes += b[i].size;
		r->blocks++;
		/* Only a clique's leader carries what it loses indirectly (memcheck: Unreached only). */
		if (b[i].kind == LEAK_DEFINITE) {
			r->ind_bytes += b[i].ind_bytes;
			r->ind_blocks += b[i].ind_blocks;
		}
	}
	table_free(&t.index);
	if (t.nrec)
		qsort(t.rec, t.nrec, sizeof(*t.rec), lr_cmp);
	free(out->records);
	out->records = t.rec;
	out->nrecords = t.nrec;
	lr_summary(b, n, out);
	return 0;
}
