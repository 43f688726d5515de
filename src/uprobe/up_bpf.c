/* up_bpf.c - the uprobe source's BPF path: loads the program built into jmptrace, makes its uprobe_multi links, keeps its maps. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perf_regs.h"
#include "up_bpf.h"
#include "up_bpf_abi.h"
#include "up_bpf_int.h"
#include "util.h"

_Static_assert(UP_BPF_SITES_MAX - 1 == UP_BPF_SITE_MASK, "up_bpf.h's bound is the cookie's");

/* The object clang built from src/uprobe/bpf/uprobe.bpf.c, linked in by up_bpf_obj.S. */
extern const char up_bpf_obj[];
extern const char up_bpf_obj_end[];
/* libbpf's messages (a verifier's refusal among them) only with -v: a fallback is no error. */
static int
up_bpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!jt_debug || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* BPF_LINK_CREATE of a uprobe_multi link: libbpf 1.1 has no call for it. Returns the fd or -1 with errno. */
static int
up_bpf_link_create(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		   size_t n, int ret)
{
	struct up_bpf_link_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = UP_BPF_TRACE_UPROBE_MULTI;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = (uint32_t)n;
	a.multi_flags = ret ? UP_BPF_F_UPROBE_MULTI_RETURN : 0;
	a.pid = (uint32_t)pid;
	return (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
}

/*
 * Whether the kernel makes uprobe_multi links for this program, without
 * registering a probe (whose removal would cost a grace period): a link
 * for a pid no process can have (above PID_MAX_LIMIT) gets as far as the
 * pid's lookup, past every check of the attach type, the flags and the
 * path, and fails there with ESRCH.
 */
static int
up_bpf_probe(int prog_fd, char *why, size_t size)
{
	uint64_t off = 0, cookie = 0;
	int fd = up_bpf_link_create(prog_fd, 0x3fffffff, "/proc/self/exe", &off, &cookie, 1, 0);

	if (fd >= 0) {
		close(fd);	/* cannot be: no such process */
		return 0;
	}
	if (errno == ESRCH)
		return 0;
	snprintf(why, size, "this kernel makes no uprobe_multi link (Linux 6.6): %s", strerror(errno));
	return -1;
}

/* Opens and loads the object with a ring of ring_bytes. Returns 0, or -1 with why written. */
static int
up_bpf_load(struct up_bpf *b, uint64_t ring_bytes, char *why, size_t size)
{
	struct bpf_program *prog;
	struct bpf_map *ring, *lost, *tops;
	int e;

	b->obj = bpf_object__open_mem(up_bpf_obj, (size_t)(up_bpf_obj_end - up_bpf_obj), NULL);
	if (!b->obj) {
		snprintf(why, size, "cannot open its BPF object: %s", strerror(errno));
		return -1;
	}
	prog = bpf_object__find_program_by_name(b->obj, "up_hit");
	ring = bpf_object__find_map_by_name(b->obj, "ring");
	lost = bpf_object__find_map_by_name(b->obj, "lost");
	tops = bpf_object__find_map_by_name(b->obj, "tops");
	if (!prog || !ring || !lost || !tops) {
		snprintf(why, size, "its BPF object lacks the program or a map");
		return -1;
	}
	/* A kernel without uprobe_multi refuses the load or, at the latest, the link (up_bpf_probe). */
	bpf_program__set_expected_attach_type(prog, (enum bpf_attach_type)UP_BPF_TRACE_UPROBE_MULTI);
	if (bpf_map__set_max_entries(ring, (uint32_t)ring_bytes) < 0 || (e = bpf_object__load(b->obj)) < 0) {
		e = errno;
		snprintf(why, size, "cannot load its BPF program: %s%s", strerror(e),
			 e == EPERM ? " (it needs CAP_BPF and CAP_PERFMON)" : "");
		return -1;
	}
	b->prog_fd = bpf_program__fd(prog);
	b->lost_fd = bpf_map__fd(lost);
	b->tops_fd = bpf_map__fd(tops);
	if (!(b->rb = ring_buffer__new(bpf_map__fd(ring), up_bpf_record, b, NULL))) {
		snprintf(why, size, "cannot map its ring: %s", strerror(errno));
		return -1;
	}
	/* The consumer's page and the producer's after it, as the kernel lays them out. */
	b->pos_len = 2 * (size_t)sysconf(_SC_PAGESIZE);
	b->pos = mmap(NULL, b->pos_len, PROT_READ, MAP_SHARED, bpf_map__fd(ring), 0);
	if (b->pos == MAP_FAILED) {
		b->pos = NULL;
		snprintf(why, size, "cannot map its ring's positions: %s", strerror(errno));
		return -1;
	}
	return 0;
}

struct up_bpf *
up_bpf_open(uint64_t ring_bytes, up_bpf_fn fn, void *arg, char *why, size_t size)
{
	struct up_bpf *b = xcalloc(1, sizeof(*b));

	b->fn = fn;
	b->arg = arg;
	b->prog_fd = b->lost_fd = b->tops_fd = -1;
	b->ring_bytes = ring_bytes;
	b->stash_max = ring_bytes * UP_STASH_RINGS > UP_STASH_MIN ? ring_bytes * UP_STASH_RINGS : UP_STASH_MIN;
	{
		pthread_mutexattr_t ma;

		/*
		 * A drain holds it for as long as it applies, in a tracer thread
		 * of ordinary (or idle) priority: the real-time reader waiting
		 * for it lends that thread its priority, as it does through the
		 * tracer lock (tthread.c), or the ring fills behind a drain that
		 * the program's busy threads keep off the CPU.
		 */
		pthread_mutexattr_init(&ma);
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&b->consume, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	libbpf_set_print(up_bpf_print);
	if (ring_bytes > ((uint64_t)1 << 31)) {
		snprintf(why, size, "a BPF ring holds at most 2 GiB (--buffer-size)");
		goto fail;
	}
	if (up_bpf_load(b, ring_bytes, why, size) < 0 || up_bpf_probe(b->prog_fd, why, size) < 0)
		goto fail;
	return b;
fail:
	up_bpf_close(b);
	return NULL;
}

void
up_bpf_close(struct up_bpf *b)
{
	if (!b)
		return;
	if (b->pos)
		munmap((void *)b->pos, b->pos_len);
	ring_buffer__free(b->rb);
	bpf_object__close(b->obj);
	up_bpf_stash_free_all(b);
	pthread_mutex_destroy(&b->consume);
	free(b);
}

uint64_t
up_bpf_cookie(uint32_t site, uint64_t regs_mask, uint32_t stack, int hook, int join, int defer)
{
	uint64_t kind = hook ? UP_BPF_HOOK
		      : regs_mask == ARCH_PERF_REGS_RET_MASK ? UP_BPF_REGS_RET
		      : regs_mask == ARCH_PERF_REGS_FREE_MASK ? UP_BPF_REGS_FREE : UP_BPF_REGS_FULL;

	return (site & UP_BPF_SITE_MASK) | kind << UP_BPF_KIND_SHIFT | (join ? UP_BPF_JOIN : 0) | (defer ? UP_BPF_DEFER : 0) |
	       (uint64_t)stack << UP_BPF_STACK_SHIFT;
}

int
up_bpf_link(struct up_bpf *b, pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
	    size_t n, int ret)
{
	return up_bpf_link_create(b->prog_fd, pid, path, offsets, cookies, n, ret);
}

int
up_bpf_set_top(struct up_bpf *b, pid_t tid, uint64_t top)
{
	uint32_t key = (uint32_t)tid;
	struct up_bpf_top v = { .top = top };

	return bpf_map_update_elem(b->tops_fd, &key, &v, BPF_ANY);
}

void
up_bpf_drop_top(struct up_bpf *b, pid_t tid)
{
	uint32_t key = (uint32_t)tid;

	(void)bpf_map_delete_elem(b->tops_fd, &key);
}

uint64_t
up_bpf_lost(const struct up_bpf *b)
{
	uint32_t key = UP_BPF_LOST_KEY;
	uint64_t n = 0;

	if (!b)
		return 0;
	if (bpf_map_lookup_elem(b->lost_fd, &key, &n) < 0)
		n = 0;
	return n + __atomic_load_n(&b->dropped, __ATOMIC_RELAXED);
}

