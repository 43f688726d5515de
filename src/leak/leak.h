/* leak.h - memcheck's leak verdicts: marks the live blocks reachable from roots and groups the rest into loss records. */
#ifndef JT_LEAK_H
#define JT_LEAK_H

#include <stddef.h>
#include <stdint.h>

struct jt_heap;

/*
 * The kinds, as valgrind's manual defines them. The order is memcheck's
 * order of the LEAK SUMMARY lines read bottom up, and the order of loss
 * records of equal size.
 */
enum leak_kind {
	LEAK_REACHABLE,		/* "still reachable": a start pointer (or a heuristic's) from a root or a reachable block */
	LEAK_POSSIBLE,		/* "possibly lost": only interior pointers, or only from possibly lost blocks */
	LEAK_INDIRECT,		/* "indirectly lost": pointed to only from lost blocks */
	LEAK_DEFINITE,		/* "definitely lost": no pointer at all (the leader of a lost group) */
	LEAK_NKINDS,
};

/* memcheck's interior-pointer heuristics (--leak-check-heuristics), one bit each. */
enum leak_heuristic {
	LEAK_HEUR_STDSTRING = 1 << 0,		/* ptr at +24, the block a COW std::string rep (length, capacity, refcount, chars) */
	LEAK_HEUR_LENGTH64 = 1 << 1,		/* ptr at +8, the first word the length of the rest */
	LEAK_HEUR_NEWARRAY = 1 << 2,		/* ptr at +8, the first word new[]'s element count */
	LEAK_HEUR_MULTIPLEINHERITANCE = 1 << 3,	/* ptr inside at a vtable pointer, the block starting with one */
	LEAK_HEUR_ALL = (1 << 4) - 1,		/* memcheck's default: all of them */
};
#define LEAK_NHEUR 4

/* "definitely lost", "indirectly lost", "possibly lost", "still reachable". */
const char *leak_kind_label(enum leak_kind k);
/* "definitely_lost", "indirectly_lost", "possibly_lost", "still_reachable": the JSON names. */
const char *leak_kind_key(enum leak_kind k);
/* The name of heuristic bit number i (0..LEAK_NHEUR-1): "stdstring", "length64", "newarray", "multipleinheritance". */
const char *leak_heur_name(unsigned i);
/*
 * Parses --leak-heuristics: a comma-separated list of the names above, or
 * "all" or "none". Returns the set, or -1 for a name it does not know.
 */
int leak_heur_parse(const char *s);

/*
 * Parses --show-leak-kinds: a comma-separated list of definite, indirect,
 * possible, reachable, or "all" or "none". Returns 1 << enum leak_kind for
 * each kind named, or -1 for a name it does not know.
 */
int leak_kinds_parse(const char *s);

/* One live block at the scan, and its verdict. */
struct leak_block {
	uint64_t addr, size;
	uint32_t stack_id;
	uint8_t kind;		/* enum leak_kind, set by leak_classify */
	uint8_t heur;		/* reachable only through this heuristic: its bit number + 1, or 0 */
	uint8_t scanned;	/* internal to leak_classify */
	uint8_t pad;
	int64_t clique;		/* internal: the leader of its lost group, or -1 */
	uint64_t ind_bytes;	/* a definitely/possibly lost leader: the bytes and blocks it loses indirectly */
	uint64_t ind_blocks;
};

/*
 * A copy of the heap's live blocks sorted by address (malloc'ed, the
 * caller frees it), every kind LEAK_DEFINITE and nothing scanned. *n gets
 * the count. Returns NULL only when there is no block.
 */
struct leak_block *leak_blocks_of(const struct jt_heap *h, size_t *n);

/* A range of the target's address space, [start, end). */
struct leak_region {
	uint64_t start, end;
};

/*
 * What the mark phase reads. Root regions are scanned word by word (8-byte
 * aligned words) except where they overlap a live block: blocks are
 * scanned only once reachable. Regions need not be sorted and may overlap
 * one another (each is scanned as given).
 */
struct leak_input {
	const struct leak_region *roots;
	size_t nroots;
	const uint64_t *words;		/* register values: each a root pointer */
	size_t nwords;
	/*
	 * Mappings that are file-backed and not writable, sorted by start:
	 * where a vtable may be (the multipleinheritance heuristic).
	 */
	const struct leak_region *vtables;
	size_t nvtables;
	/*
	 * Mappings that are file-backed and executable, sorted by start: where
	 * the functions a vtable lists must be (memcheck wants two such
	 * entries among a table's first 21 words). None given: the vtables
	 * regions stand in for them (they hold the text too, a looser test).
	 */
	const struct leak_region *texts;
	size_t ntexts;
	unsigned heuristics;		/* enum leak_heuristic bits */
	/*
	 * Reads len bytes of the target at addr; returns 0, or -1 when any
	 * part cannot be read (that range is then skipped: it holds no pointer).
	 */
	int (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	void *arg;
};

/* Figures of the whole scan. */
struct leak_stats {
	uint64_t root_bytes;		/* root memory scanned */
	uint64_t block_bytes;		/* block memory scanned */
	uint64_t unreadable_bytes;	/* root (or block) memory that could not be read */
};

/*
 * The mark phase: classifies every block of b[0..n) (sorted by address, as
 * leak_blocks_of returns them) as memcheck does, filling kind, heur,
 * ind_bytes and ind_blocks. Returns 0, or -1 when out of memory.
 */
int leak_classify(struct leak_block *b, size_t n, const struct leak_input *in, struct leak_stats *stats);

/* One loss record: the blocks of one stack with one verdict. */
struct leak_record {
	uint32_t stack_id;
	enum leak_kind kind;
	uint64_t bytes, blocks;		/* the blocks themselves */
	uint64_t ind_bytes, ind_blocks;	/* definitely/possibly lost: what they lose indirectly besides */
	uint32_t number;		/* "loss record K of T": K, from 1 */
};

/* The verdict of one leak check. */
struct leak_result {
	struct leak_record *records;	/* in valgrind's order: by bytes + ind_bytes ascending, then kind */
	size_t nrecords;
	uint64_t bytes[LEAK_NKINDS], blocks[LEAK_NKINDS];	/* the LEAK SUMMARY */
	uint64_t heur_bytes[LEAK_NHEUR], heur_blocks[LEAK_NHEUR];	/* "of which reachable via heuristic" */
	unsigned heuristics;		/* the set the scan used */
	struct leak_stats stats;
	int attached;			/* blocks older than the attach are unknown: heap memory that is
					   no known block was taken as a root */
	unsigned nthreads;		/* threads whose registers and stacks were roots */
	uint64_t pause_us;		/* how long the process was held stopped for it */
	uint64_t scan_us;		/* of which the roots and the mark phase */
};

/*
 * Groups classified blocks into loss records (by stack and kind) and
 * fills the summary; records and figures in out are replaced. Returns 0 or -1.
 */
int leak_records(const struct leak_block *b, size_t n, struct leak_result *out);

/* Frees what a result holds and zeroes it. */
void leak_result_clear(struct leak_result *r);

#endif
