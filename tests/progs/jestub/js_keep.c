/* js_keep.c - blocks kept in a global to the end. */
#include "js.h"
#include "../common/sink.h"

void *js_kept[JS_KEEP_N + 2];

__attribute__((noinline, noipa)) void
js_keep(void)
{
	for (int i = 0; i < JS_KEEP_N; i++) {
		js_kept[i] = je_malloc(opaque_size(JS_KEEP_SIZE)); /* SITE:js_keep_malloc */
		sink(js_kept[i], JS_KEEP_SIZE);
	}
	js_kept[JS_KEEP_N] = je_calloc(JS_CALLOC_N, opaque_size(JS_CALLOC_SIZE)); /* SITE:js_keep_calloc */
	sink(js_kept[JS_KEEP_N], 1);
}
