/* tracer.h - the tracer session: every traced process and thread, the tracer threads, and where reports go. */
#ifndef JT_TRACER_H
#define JT_TRACER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tthread.h"

struct jt_options;
struct jt_proc;
struct jt_thread;
struct jt_json_out;
struct jt_html_out;
struct jt_outfile;
struct jt_supp;
struct jt_due;
struct jt_unwind_ctx;
struct jt_uprobes;
struct jt_usite;
struct up_ring;
struct jt_worker;
struct snapshot_job;

/*
 * The tracer session: every process and thread, and where reports go.
 * Shared by the tracer threads: whoever touches it holds tthreads.lock.
 */
struct jt_tracer {
	struct jt_tthreads tthreads;	/* the tracer threads, and the lock */
	struct jt_proc *recall;		/* every thread of this process is being brought to tracer thread 0 */
	struct jt_thread *deferred;	/* arrived at tracer thread 0 during a recall, to handle after it */
	unsigned long ptrace_options;	/* PTRACE_O_* every seized thread gets */
	const struct jt_options *opt;
	struct jt_proc *procs;
	/*
	 * Processes that ended with a report due (lifecycle_exited), unlinked
	 * from procs, and images an exec ended (proc_take_image, in no list),
	 * oldest first: the loop writes each one's report and frees it, after
	 * the stop it ended in is handled.
	 */
	struct jt_proc *ended;
	struct jt_thread *threads[1024];	/* tid hash */
	struct jt_uprobes *uprobes;	/* --source uprobe's event source, or NULL */
	struct jt_json_out *json;
	struct jt_html_out *html;	/* --html's page, or NULL */
	FILE *out;			/* text reports */
	struct jt_outfile *out_file;	/* -o's output under out, or NULL for stderr */
	struct jt_outfile *formats[6];	/* the file formats' outputs, in snapshot.h's order, or NULL */
	int report_failed;		/* a report could not be written: jmptrace exits 1 */
	/* --source uprobe (loop.c): the lost events stderr last said, when, and when the counters were last read. */
	uint64_t lost_said, lost_said_ms, lost_check_ms;
	struct jt_supp *supp;		/* suppressions (--suppressions and the built-in ones) */
	struct jt_wrap *wrap;		/* the allocator's wrappers a row's name skips (built in, --alloc-fn) */
	unsigned nsnapshots;		/* snapshots written so far: the number of the next file */
	/*
	 * The thread that writes --interval's snapshots beside the tracing
	 * (snapshot.c), and the snapshot it was handed last, until collected
	 * (snapshot_sync). Whatever that snapshot points to and the tracing
	 * may change (a process's symbolizer, leak verdict, growth history)
	 * changes only after worker_wait.
	 */
	struct jt_worker *snap_worker;
	struct snapshot_job *snap_job;
	struct jt_cpu snap_cpu;		/* the worker's scheduling class, chosen as a tracer thread's (cpu.h) */
	/* --interval and --duration (loop.c): snapshots due at fixed times of the main process's time_ms. */
	uint64_t origin_us;		/* its time_ms 0, on util_now_us's clock */
	uint64_t start_ms;		/* when the loop began, in time_ms: both count from there */
	uint64_t due_ms;		/* the next one due, in time_ms; 0 for none */
	int due_armed;			/* the timer is set for due_ms itself, not a little before */
	char late_why[96];		/* the work that ran past due_ms and for how long; "" while none did */
	const struct jt_due *due;	/* while a scheduled snapshot is written: when it was due */
	unsigned due_skipped;		/* --interval's times passed over: a snapshot took longer to write (due.c) */
	uint64_t due_longest_ms;	/* the longest time a snapshot took to write, in ms */
	/*
	 * What every thread handed to a tracer thread gets on arrival, in every
	 * handover_receive (a recall's too): loop.c's pins it (--pin) and then
	 * calls stopall_arrived. Set before a second tracer thread starts (only
	 * the loop starts them), so that handover, below stopall, never calls it.
	 */
	void (*arrived)(struct jt_tracer *tr, struct jt_thread *t);
	/* Called by thread_free before a thread block goes (uprobes.c closes its events), or NULL. */
	void (*thread_gone)(struct jt_tracer *tr, struct jt_thread *t);
	pid_t main_pid;
	int main_exited, main_status;	/* wait status of the main process */
	uint64_t events;		/* breakpoint hits handled */
	int image_seen;			/* the first program image was set up */
	int launched_script;		/* the program launched is a #! script: its first image is the interpreter's */
	int fatal;			/* the program cannot be traced; stop */
	int bad_names;			/* a function named by --alloc is defined nowhere: exit status 2 */
	int detached;			/* we let the attached process go */
	int detaching;			/* letting every process go: hold every thread that stops */
	int show_status;		/* print a status line (attached, stderr a terminal) */
	int status_shown;
	uint64_t status_ms, status_events;
};

#endif
