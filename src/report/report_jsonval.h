/* report_jsonval.h - how the JSON writers spell a string and a stack's frames (private to the report writers, src/report/report_*.c). */
#ifndef JT_REPORT_JSONVAL_H
#define JT_REPORT_JSONVAL_H

#include <stdio.h>

struct jt_snapshot;
struct jt_stack;
struct jt_seen;

/*
 * Writes str as a JSON string, or null. Paths and names are bytes, not
 * necessarily UTF-8; a byte that is not part of valid UTF-8 becomes U+FFFD
 * so that strict parsers still accept the file.
 */
void jsonval_str(FILE *f, const char *str);

/*
 * Writes "site": the index in "frames" of the frame that names the code
 * that allocated (report_site: the first outside the allocator's
 * wrappers), then "frames": [...] for st: every source-level frame of every
 * pc, each a {"address", "module", "offset", "function", "file", "line",
 * "inlined"} object; "truncated" (and "cut_by") after a cut stack.
 */
void jsonval_frames(FILE *f, const struct jt_snapshot *s, const struct jt_stack *st);

/*
 * As jsonval_frames, with each frame given by its number in the file's
 * frame table (seen_frame): a frame's object is written once per file, in
 * the "new_frames" of the snapshot that first lists it.
 */
void jsonval_frame_ids(FILE *f, const struct jt_snapshot *s, const struct jt_stack *st, struct jt_seen *seen);

#endif
