# Makefile - builds jmptrace, its tests and samples.
PREFIX  ?= /usr/local
CC      ?= gcc
CFLAGS  ?= -O2 -g
WARN     = -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
CPPFLAGS += -Iinclude -I/usr/include/x86_64-linux-gnu -D_GNU_SOURCE
LIBS     = -ldw -lelf -lunwind-generic -lunwind -lcapstone -lstdc++
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

BUILD   ?= build
SRCS     = $(wildcard src/*.c)
LIB_SRCS = $(filter-out src/main.c,$(SRCS))
OBJS     = $(SRCS:src/%.c=$(BUILD)/%.o)
LIB_OBJS = $(LIB_SRCS:src/%.c=$(BUILD)/%.o)
UNIT_SRCS = $(wildcard tests/unit/test_*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)

all: jmptrace

jmptrace: $(BUILD)/jmptrace
	cp $< $@

$(BUILD)/jmptrace: $(OBJS)
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/%.o: src/%.c $(wildcard include/*.h) | $(BUILD)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) $(WARN) -c -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(LIB_OBJS) | $(BUILD)
	@mkdir -p $(BUILD)/unit
	$(CC) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) $(WARN) -o $@ $< $(LIB_OBJS) $(LIBS)

$(BUILD):
	mkdir -p $(BUILD)

# Test programs and samples are built in every link mode by their own makefiles.
progs:
	$(MAKE) -C tests/progs
samples-build:
	$(MAKE) -C samples

unit: $(UNIT_BINS)

# make check: unit tests, then the integration suite, then both again under ASan+UBSan.
check: all unit progs
	prove -v --timer tests/unit.t tests/integration.t
	$(MAKE) check-asan

check-fast: all unit progs
	prove tests/unit.t tests/integration.t

# The sanitizer variant builds its own tree so the normal binary stays untouched.
check-asan:
	$(MAKE) BUILD=build-asan EXTRA_CFLAGS="$(SAN_FLAGS)" $(BUILD)-asan-bins
	JMPTRACE=$(CURDIR)/build-asan/jmptrace UNIT_DIR=$(CURDIR)/build-asan/unit \
	  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  prove tests/unit.t tests/integration.t

$(BUILD)-asan-bins: $(BUILD)/jmptrace $(UNIT_BINS)

bench: all
	bash bench/run.sh

install: all
	install -D -m 755 jmptrace $(DESTDIR)$(PREFIX)/bin/jmptrace

clean:
	rm -rf build build-asan jmptrace
	$(MAKE) -C tests/progs clean
	$(MAKE) -C samples clean

.PHONY: all check check-fast check-asan unit progs samples-build bench install clean
