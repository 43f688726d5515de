# Makefile - builds jmptrace, its tests and samples.
PREFIX  ?= /usr/local
CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
# ARCH: the directory under src/arch/ that holds the target architecture's code
# and its arch.h (x86-64 is the only one so far).
ARCH    ?= x86_64
# The source folders, one per subsystem of a layer (doc/internals.md), each with its
# headers beside its code: each is a -I, so that "x.h" names a header wherever it
# lives (make check-graph checks which folder may include which).
SRC_DIRS = src $(filter-out src/arch/,$(sort $(dir $(wildcard src/*/*.c src/*/*.h))))
CPPFLAGS += $(addprefix -I,$(SRC_DIRS)) -Isrc/arch/$(ARCH) -I/usr/include/x86_64-linux-gnu -D_GNU_SOURCE
LIBS     = -ldw -lelf -lunwind-generic -lunwind -lcapstone -ljson-c -lz -lbpf -lstdc++ -pthread
# The sanitizer variant is also the debug build: JT_DEBUG checks every thread
# state change against tstate.h's edges (and aborts on any other).
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -DJT_DEBUG

BUILD   ?= build
SRCS     = $(filter-out %.bpf.c,$(wildcard src/*.c src/*/*.c)) $(wildcard src/arch/$(ARCH)/*.c)
LIB_SRCS = $(filter-out src/main.c,$(SRCS))
# The --html page: report_html_page.S takes the template and its script in whole (.incbin).
PAGE_SRC = src/report/report_html_page.S
PAGE_OBJ = $(BUILD)/report_html_page.o
# The uprobe source's BPF program: clang's BPF target builds it (BTF from -g:
# libbpf reads its maps' definitions there; no CO-RE, it reads only the UAPI
# struct pt_regs and user memory), up_bpf_obj.S takes the object in whole.
BPF_CLANG ?= clang
BPF_SRC  = src/uprobe/bpf/uprobe.bpf.c
BPF_PROG = $(BUILD)/bpf/uprobe.bpf.o
BPF_EMBED_SRC = src/uprobe/up_bpf_obj.S
BPF_EMBED = $(BUILD)/up_bpf_obj.o
OBJS     = $(SRCS:src/%.c=$(BUILD)/%.o) $(PAGE_OBJ) $(BPF_EMBED)
LIB_OBJS = $(LIB_SRCS:src/%.c=$(BUILD)/%.o) $(PAGE_OBJ) $(BPF_EMBED)
UNIT_SRCS = $(wildcard tests/unit/test_*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)

all: jmptrace

jmptrace: $(BUILD)/jmptrace
	cp $< $@.tmp && mv -f $@.tmp $@

$(BUILD)/jmptrace: $(OBJS)
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -o $@ $^ $(LIBS)

# Each object depends on the headers it includes, as the compiler lists them
# (-MMD -MP writes BUILD/X.d beside it). An object without its .d yet (made
# before this rule) is rebuilt: the empty rule below "makes" the missing .d.
DEPFLAGS = -MMD -MP

$(BUILD)/%.o: src/%.c $(BUILD)/%.d | $(BUILD)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) $(WARN) -c -o $@ $<

$(BUILD)/%.d: ;
.PRECIOUS: $(BUILD)/%.d

$(PAGE_OBJ): $(PAGE_SRC) $(PAGE_SRC:.S=.html) $(PAGE_SRC:.S=.js) | $(BUILD)
	$(CC) -c -DREPORT_HTML_PAGE='"$(PAGE_SRC:.S=.html)"' -DREPORT_HTML_SCRIPT='"$(PAGE_SRC:.S=.js)"' -o $@ $<

$(BPF_PROG): $(BPF_SRC) src/uprobe/up_bpf_abi.h src/arch/$(ARCH)/bpf_regs.h | $(BUILD)
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -target bpf -O2 -g -Wall -Werror $(CPPFLAGS) -U_GNU_SOURCE -c -o $@ $<

$(BPF_EMBED): $(BPF_EMBED_SRC) $(BPF_PROG) | $(BUILD)
	$(CC) -c -DUP_BPF_OBJ='"$(BPF_PROG)"' -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(BUILD)/unit/%.d $(LIB_OBJS) | $(BUILD)
	@mkdir -p $(BUILD)/unit
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) $(WARN) -o $@ $< $(LIB_OBJS) $(LIBS)

$(BUILD):
	mkdir -p $(BUILD)

-include $(OBJS:.o=.d) $(UNIT_BINS:=.d)

# Test programs and samples are built in every link mode by their own makefiles.
progs:
	$(MAKE) -C tests/progs
samples-build:
	$(MAKE) -C samples

unit: $(UNIT_BINS)

# make check: unit tests and the integration suite, then both again with
# jmptrace and the unit tests built under AddressSanitizer and UBSan, then the
# suites of exact figures again with every run under --source uprobe (as root;
# each skips what needs root without it).
check: check-plain check-asan check-uprobe

# Every link mode, threads, C++, signals in handlers (sigstack.t: one that interrupts the
# kernel's return trampoline too), fork, exec and -f, leak checks. Not frees.t, whose
# hundreds of short runs each pay the probes' setup (it takes 9 minutes so).
UPROBE_SUITES = tests/integration.t tests/target.t tests/lifecycle.t tests/sigtrap.t tests/leakcheck.t tests/sigstack.t

check-uprobe: all progs samples-build
	@if [ "$$(id -u)" = 0 ]; then \
	  JT_SOURCE=uprobe JMPTRACE=$(CURDIR)/jmptrace bash tests/prove.sh $(UPROBE_SUITES); \
	else echo "check-uprobe: skipped: the uprobe source needs root"; fi

# The module graph has no cycle (but the known ones the script lists), and a
# thread's state is written only by thread_set_state (thread.h); a second.
check-graph:
	perl tests/modgraph.pl
	@! grep -rnE --include='*.[ch]' '(->|\.)state = TS_' src | grep -v '^src/tracer/thread.h:' || \
	  { echo "check-graph: write a thread's state with thread_set_state (tstate.h)"; exit 1; }

# Suites that need the CPUs to themselves run one at a time, after the others have
# run CHECK_JOBS at a time: the kernel's rings of the uprobe source lose events when
# jmptrace waits for a CPU, and these count heartbeats, stalls or races within seconds.
SERIAL_SUITES = tests/fatal.t tests/stall.t tests/uprobe.t tests/uprobe_server.t tests/uprobe_kill.t tests/uprobe_defs.t tests/blockmem.t tests/uprobe_paths.t \
	tests/uprobe_clash.t tests/attach_races.t tests/detach_signal.t tests/pin.t
PARALLEL_SUITES = $(filter-out $(SERIAL_SUITES),$(wildcard tests/*.t))
CHECK_JOBS ?= 2

check-plain: check-graph all unit progs samples-build
	bash tests/prove.sh --exec '' -j$(CHECK_JOBS) $(UNIT_BINS)
	JMPTRACE=$(CURDIR)/jmptrace bash tests/prove.sh -j$(CHECK_JOBS) $(PARALLEL_SUITES)
	JMPTRACE=$(CURDIR)/jmptrace bash tests/prove.sh $(SERIAL_SUITES)

# The sanitizer variant builds in its own tree so the normal binary stays untouched.
# It runs the unit tests and the suites that take jmptrace's memory handling through
# every path (tables, unwinders, symbols, leak check, each writer and reader, the
# output thread, fork/exec/threads, the uprobe source's rings), in one link mode:
# the others add timing, not code. The suites of time and load stay out of it (a
# sanitized tracer is several times slower, which they would measure).
ASAN_SUITES = tests/integration.t tests/target.t tests/exec.t tests/leakcheck.t tests/leakreport.t tests/frees.t tests/formats.t \
	tests/pprof.t tests/flamegraph.t tests/diff.t tests/outputs.t tests/lifecycle.t tests/analyses.t \
	tests/alloc_names.t tests/names.t tests/cxxnames.t tests/pages.t tests/sigtrap.t tests/sigstack.t \
	tests/age.t tests/timeline.t tests/report_first.t tests/deleted.t tests/debuginfod.t tests/options.t \
	tests/nested.t
ASAN_UPROBE_SUITES = tests/integration.t tests/target.t tests/leakcheck.t
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	JMPTRACE=$(CURDIR)/build-asan/jmptrace JT_MODES=pie

check-asan:
	$(MAKE) BUILD=build-asan EXTRA_CFLAGS="$(SAN_FLAGS)" build-asan/jmptrace asan-unit progs
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  bash tests/prove.sh --exec '' -j$(CHECK_JOBS) $(UNIT_SRCS:tests/unit/%.c=build-asan/unit/%)
	$(ASAN_ENV) bash tests/prove.sh -j$(CHECK_JOBS) $(ASAN_SUITES)
	@if [ "$$(id -u)" = 0 ]; then $(ASAN_ENV) JT_SOURCE=uprobe bash tests/prove.sh $(ASAN_UPROBE_SUITES); \
	else echo "check-asan: the uprobe source skipped: it needs root"; fi

asan-unit: $(UNIT_BINS)

bench: all
	bash bench/run.sh
	bash bench/programs.sh
	bash bench/leak_pause.sh
	bash bench/soak.sh

install: all
	install -D -m 755 jmptrace $(DESTDIR)$(PREFIX)/bin/jmptrace
	install -D -m 644 doc/jmptrace.1 $(DESTDIR)$(PREFIX)/share/man/man1/jmptrace.1

clean:
	rm -rf build build-asan jmptrace
	$(MAKE) -C tests/progs clean
	$(MAKE) -C samples clean

.PHONY: all check check-graph check-plain check-asan check-uprobe asan-unit unit progs samples-build bench install clean
