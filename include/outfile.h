/* outfile.h - where a report goes: standard output or another stream written in place, or a file replaced whole. */
#ifndef JT_OUTFILE_H
#define JT_OUTFILE_H

#include <stdio.h>

/*
 * One output the user named. Its rule, for every report:
 *   "-", and a descriptor's name (/dev/stdout, /dev/stderr, /dev/fd/N,
 *   /proc/self/fd/N, a shell's >(...)) are that descriptor, duplicated;
 *   a path that is, after its symlinks, anything but a regular file (a
 *   device, a FIFO, a socket) is opened once and written in place;
 * both are streams: kept open for the whole run, every content appended.
 *   A regular file or a new name (after its symlinks, so that a symlink
 *   stays one) gets each content in a new temporary file, made by mkstemp
 *   in its own directory, renamed over it when complete.
 */
struct jt_outfile;

/*
 * Takes path before any report is written: opens a stream now (a FIFO
 * blocks until it has a reader, as the shell's > does); for a file, checks
 * that it could be replaced (its directory takes a new file, an existing
 * file is writable) without creating anything. Returns NULL with errno set.
 */
struct jt_outfile *outfile_open(const char *path);

/* 1 when o is a stream: never renamed, not seekable, contents follow each other. */
int outfile_is_stream(const struct jt_outfile *o);

/*
 * Starts one content: returns the stream, or a new temporary file for name
 * (o's path when name is NULL; with --interval, a numbered name). A name
 * that is not a regular file gets the stream rule for this content alone.
 * Returns NULL with errno set.
 */
FILE *outfile_begin(struct jt_outfile *o, const char *name);

/*
 * Ends the content begun: flushes a stream; closes the temporary file and
 * renames it over its name. Returns 0, or -1 with errno set (a write, the
 * close or the rename failed; the temporary file is removed).
 */
int outfile_commit(struct jt_outfile *o);

/*
 * For a report that grows with every snapshot (-o, --json): puts the
 * temporary file begun in place now and keeps it open, a stream from then
 * on that only we wrote. Nothing to do for a stream. Returns 0 or -1 as
 * outfile_commit.
 */
int outfile_publish(struct jt_outfile *o);

/* Closes o and frees it (NULL is fine). Returns 0, or -1 with errno set when the last writes failed. */
int outfile_close(struct jt_outfile *o);

#endif
