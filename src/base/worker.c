/* worker.c - a thread of jmptrace's own that runs one job at a time beside the tracing. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "util.h"
#include "worker.h"

struct jt_worker {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* a job was handed over, one ended, or the end was asked */
	pthread_t thread;
	int running;			/* the thread was made */
	pid_t tid;			/* its kernel thread id, once it runs */
	int quit;
	void (*fn)(void *);		/* the job handed over and not yet ended, or NULL */
	void *arg;
	cpu_set_t cpus;			/* the CPUs the user allows, as worker_new found them */
	int cpus_known;
};

struct jt_worker *
worker_new(void)
{
	struct jt_worker *w = xcalloc(1, sizeof(*w));
	pthread_condattr_t ca;

	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, UTIL_CLOCK);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* Now, before the run: tracer thread 0 may be placed on one CPU later, and a thread inherits that. */
	w->cpus_known = sched_getaffinity(0, sizeof(w->cpus), &w->cpus) == 0;
	return w;
}

static void *
worker_main(void *arg)
{
	struct jt_worker *w = arg;

	pthread_mutex_lock(&w->lock);
	w->tid = gettid();
	for (;;) {
		while (!w->fn && !w->quit)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->fn)
			break;
		pthread_mutex_unlock(&w->lock);
		w->fn(w->arg);
		pthread_mutex_lock(&w->lock);
		w->fn = NULL;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int
worker_post(struct jt_worker *w, void (*fn)(void *), void *arg)
{
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (w->fn)
		err = EBUSY;
	else if (!w->running && !(err = util_thread_start(&w->thread, worker_main, w, w->cpus_known ? &w->cpus : NULL, 0)))
		w->running = 1;
	if (!err) {
		w->fn = fn;
		w->arg = arg;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	if (err)
		errno = err;
	return err ? -1 : 0;
}

int
worker_busy(struct jt_worker *w)
{
	int busy;

	pthread_mutex_lock(&w->lock);
	busy = w->fn != NULL;
	pthread_mutex_unlock(&w->lock);
	return busy;
}

void
worker_hurry(struct jt_worker *w)
{
	struct sched_param sp = { 0 };

	pthread_mutex_lock(&w->lock);
	if (w->fn && w->tid > 0 && sched_getscheduler(w->tid) == SCHED_IDLE)
		sched_setscheduler(w->tid, SCHED_OTHER, &sp);
	pthread_mutex_unlock(&w->lock);
}

void
worker_wait(struct jt_worker *w)
{
	if (!w)
		return;
	worker_hurry(w);
	pthread_mutex_lock(&w->lock);
	while (w->fn)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

void
worker_free(struct jt_worker *w)
{
	if (!w)
		return;
	/* Its caller is the one who posts: no job comes after this wait. */
	worker_wait(w);
	pthread_mutex_lock(&w->lock);
	w->quit = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (w->running)
		pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
