/* uprobes.c - the kernel uprobe event source's session: made and ended, its keeper child, its last way out, its counts. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "proc.h"
#include "tracer.h"
#include "unwind.h"
#include "sigsafe.h"
#include "up_bpf.h"
#include "up_tracefs.h"
#include "uprobes.h"
#include "uprobes_int.h"
#include "util.h"

#define UP_PMU_DIR "/sys/bus/event_source/devices/uprobe"

int
uprobes_usable(const char **why)
{
	char dir[64];

	if (up_tracefs_number(UP_PMU_DIR "/type") < 0) {
		*why = "this kernel has no uprobes (CONFIG_UPROBE_EVENTS)";
		return -1;
	}
	if (up_tracefs_find(dir, sizeof(dir)) < 0) {
		*why = geteuid() ? "it needs root (to define probes in tracefs's uprobe_events)"
				 : "tracefs is not mounted and cannot be (/sys/kernel/tracing)";
		return -1;
	}
	return 0;
}

/* The child the anchors are opened on: it sleeps, never running the probed code, and dies with us. */
static pid_t
up_keeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

/*
 * tr->thread_gone: a traced thread ended (still counted among its
 * process's); with its process's last, the BPF path's links of the
 * process go.
 */
static void
up_thread_gone(struct jt_tracer *tr, struct jt_thread *t)
{
	uprobes_thread_close(tr->uprobes, t, 1);
	uprobes_bpf_top_drop(tr->uprobes, t, 1);
	if (tr->uprobes && tr->uprobes->bpf && t->proc->nthreads == 1)
		uprobes_bpf_unlink(tr->uprobes, t->proc->pid, 1);
}

struct jt_uprobes *
uprobes_new(struct jt_tracer *tr, uprobes_apply_fn apply, uint32_t stack_copy, uint64_t ring_bytes,
	    uint64_t ring_total, int bpf_only)
{
	struct jt_uprobes *u = xcalloc(1, sizeof(*u));
	const char *why = "tracefs cannot be used";

	if (uprobes_usable(&why) < 0 || up_tracefs_find(u->tracefs, sizeof(u->tracefs)) < 0) {
		if (bpf_only)
			debug_msg("source: ptrace, the uprobe source cannot be had: %s", why);
		else
			error_msg("--source uprobe: %s", why);
		free(u);
		return NULL;
	}
	u->tr = tr;
	u->apply = apply;
	snprintf(u->group, sizeof(u->group), "jmptrace_%d", (int)getpid());
	up_tracefs_clean_stale(u->tracefs);
	if ((u->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
		perror_msg("--source uprobe: eventfd");
		free(u);
		return NULL;
	}
	/* 0, the default: each thread's whole stack where the BPF path knows its top. */
	u->stack_whole = stack_copy == 0;
	u->stack_copy = stack_copy ? stack_copy : UPROBES_STACK_DEFAULT;
	/* The BPF path needs no definition, hence no anchor and no keeper. */
	uprobes_bpf_choose(u, ring_bytes);
	if (bpf_only && !u->bpf) {
		debug_msg("source: ptrace, the uprobe source would take its perf path");
		close(u->wake);
		free(u);
		return NULL;
	}
	if (!u->bpf && (u->keeper = up_keeper()) < 0) {
		perror_msg("--source uprobe: fork");
		close(u->wake);
		free(u);
		return NULL;
	}
	u->ring_bytes = ring_bytes;
	u->ring_total = ring_total;
	u->ctx = unwind_ctx_new();
	pthread_mutex_init(&u->graves_lock, NULL);
	pthread_cond_init(&u->graves_cond, NULL);
	tr->thread_gone = up_thread_gone;
	return u;
}

void
uprobes_free(struct jt_uprobes *u)
{
	if (!u)
		return;
	uprobes_stop(u);
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext)
			uprobes_thread_close(u, t, 0);
	u->tr->thread_gone = NULL;
	if (u->bpf) {
		uprobes_bpf_unlink(u, 0, 0);
		uprobes_bpf_free(u);
	}
	uprobes_defs_release(u);
	if (u->keeper > 0) {
		kill(u->keeper, SIGKILL);
		waitpid(u->keeper, NULL, 0);
	}
	for (size_t i = 0; i < u->nsites; i++) {
		free(u->sites[i]->path);
		free(u->sites[i]);
	}
	free(u->sites);
	free(u->ids);
	free(u->id_site);
	unwind_ctx_free(u->ctx);
	close(u->wake);
	pthread_mutex_destroy(&u->graves_lock);
	pthread_cond_destroy(&u->graves_cond);
	free(u);
}

/* A line of /proc/self/maps: a ring of a perf event is unmapped (it holds the event open). */
static int
up_emerg_unmap(char *line, void *arg)
{
	uint64_t start = 0, end = 0;
	char *s = line;

	(void)arg;
	if (!strstr(line, "anon_inode:[perf_event]"))
		return 0;
	for (; *s && *s != '-'; s++)
		start = start * 16 + (uint64_t)(*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
	for (s += *s == '-'; *s && *s != ' '; s++)
		end = end * 16 + (uint64_t)(*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
	if (end > start)
		munmap((void *)(uintptr_t)start, end - start);
	return 0;
}

void
uprobes_apply(struct jt_uprobes *u, const struct jt_usample *s)
{
	if (u->apply(u->tr, u->ctx, s))
		u->tr->events++;
}

void
uprobes_emerg_release(const struct jt_uprobes *u)
{
	static char buf[4096];

	if (!u)
		return;
	/*
	 * The kernel refuses to remove a definition while an event is open on
	 * it, and a ring's mapping holds its event open as its descriptor
	 * does. jmptrace is about to die and its tracees are let go: nothing
	 * of its descriptors is needed but stderr.
	 */
	sigsafe_each_line("/proc/self/maps", buf, sizeof(buf), up_emerg_unmap, NULL);
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
		for (int fd = 3; fd < 65536; fd++)
			close(fd);
	/* The last event of a definition takes the kernel a grace period or two to release. */
	up_tracefs_remove_group_sigsafe(u->tracefs, u->group, 3000);
}

void
uprobes_detach(struct jt_uprobes *u)
{
	if (!u)
		return;
	uprobes_settle(u, NULL);
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext)
			uprobes_thread_close(u, t, 0);
	if (u->bpf)
		uprobes_bpf_unlink(u, 0, 0);
}

uint64_t
uprobes_lost(const struct jt_uprobes *u)
{
	uint64_t lost;

	if (!u)
		return 0;
	lost = u->lost + up_bpf_lost(u->bpf);
	for (size_t i = 0; i < ARRAY_SIZE(u->tr->threads); i++)
		for (struct jt_thread *t = u->tr->threads[i]; t; t = t->hnext)
			lost += uprobes_thread_lost(t);
	return lost;
}

uint64_t
uprobes_samples(const struct jt_uprobes *u)
{
	return u ? u->samples : 0;
}
