# sluice — build with `make`, test with `make test` (see README).
PKGS     := yaml-0.1 jansson libcurl sqlite3 libmicrohttpd libarchive libssh libxml-2.0 libpq
CC       ?= cc
CSTD     := -std=c17 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wformat=2 -Wno-format-nonliteral -Wvla -Wpointer-arith -Wundef
OPT      ?= -O2 -g
# -Isrc: includes name a module from the top ("core/err.h"); -MMD writes each
# object's header dependencies beside it, so a header change rebuilds its users.
CFLAGS   += $(CSTD) $(WARN) $(OPT) -Isrc -MMD -MP $(shell pkg-config --cflags $(PKGS))
# Loaded on first use through core/dl (dlopen), not linked: a command that
# does not use one does not map it and what it pulls in (docs/dependencies.md).
DLOPENED := libarchive libmicrohttpd libssh sqlite3 libcurl libxml-2.0 libpq
# libyaml and jansson (MIT) are linked in statically: two shared libraries
# fewer to find, map and relocate at every start (docs/dependencies.md).
STATIC   := yaml-0.1 jansson
# Linked as shared libraries: what is neither (none today; pkg-config
# complains when asked about no package).
LINKED   := $(filter-out $(DLOPENED) $(STATIC),$(PKGS))
LDLIBS   += -Wl,-Bstatic $(shell pkg-config --libs $(STATIC)) -Wl,-Bdynamic \
            $(if $(LINKED),$(shell pkg-config --libs $(LINKED))) -ldl -lpthread
BUILD    ?= build

# src/sandbox/local/init.c is a program of its own (the sandbox's pid 1),
# linked statically and embedded in the library as bytes.
INIT_SRC := src/sandbox/local/init.c
SRC      := $(filter-out $(EXCLUDE) $(INIT_SRC),$(sort $(wildcard src/core/*.c src/dsl/*.c src/engine/*.c src/nodes/*.c src/sandbox/*.c src/sandbox/local/*.c src/llm/*.c src/store/*.c src/server/*.c src/tmpl/*.c src/agent/*.c src/net/*.c src/tools/*.c src/extract/*.c src/knowledge/*.c)))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
OBJ      := $(SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/init_blob.o $(BUILD)/gen/hnsw_blob.o \
            $(BUILD)/gen/console_assets.o
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libsluice.a
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all test asan fuzz bench bench-console bench-multi bench-queue bench-startup bench-sandbox bench-llm bench-serve bench-agent bench-jinja bench-tools bench-mcp bench-openapi bench-extract bench-knowledge bench-kb clean
all: $(BUILD)/sluice $(UNIT_BIN)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The sandbox's init: static, no sanitizers (it runs alone in the sandbox),
# then a C array for the library (src/sandbox/local/local.c execs this file
# when it sits beside sluice and checks out, else a memfd copy of the array).
# Built with musl when musl-gcc is there (scripts/install-deps installs it): a
# static glibc program spends about 0.4 ms of every sandbox start in its
# own start-up; musl's is a few pages.  musl's headers lack the kernel's
# (linux/, asm/), so a folder of links to the system's is added last.
INIT_CC  ?= $(shell command -v musl-gcc 2>/dev/null)
ARCH_INC := $(firstword $(wildcard /usr/include/$(shell $(or $(INIT_CC),$(CC)) -dumpmachine)/asm))
$(BUILD)/sluice-init: $(INIT_SRC) src/sandbox/local/proto.h
	@mkdir -p $(dir $@)
ifneq ($(INIT_CC),)
	@mkdir -p $(BUILD)/init-include
	@ln -sfn /usr/include/linux $(BUILD)/init-include/linux
	@ln -sfn /usr/include/asm-generic $(BUILD)/init-include/asm-generic
	@ln -sfn $(if $(ARCH_INC),$(ARCH_INC),/usr/include/asm) $(BUILD)/init-include/asm
	$(INIT_CC) -isystem $(BUILD)/init-include $(CSTD) $(WARN) -Isrc -O2 -static -Wl,--build-id=sha1 -o $@ $(INIT_SRC)
else
	$(CC) $(CSTD) $(WARN) -Isrc -O2 -static -Wl,--build-id=sha1 -o $@ $(INIT_SRC)
endif

$(BUILD)/gen/init_blob.c: $(BUILD)/sluice-init
	@mkdir -p $(dir $@)
	{ echo '#include <stddef.h>'; echo 'const unsigned char sl_init_blob[] = {'; \
	  od -An -v -tu1 $< | sed 's/  */,/g; s/^,//; s/$$/,/'; echo '};'; \
	  echo 'const size_t sl_init_blob_len = sizeof sl_init_blob;'; } > $@

$(BUILD)/gen/init_blob.o: $(BUILD)/gen/init_blob.c
	$(CC) -c -O0 $< -o $@

# knowledge/vindex's approximate index is hnswlib (Debian's libhnswlib-dev,
# header-only C++) behind src/knowledge/hnsw_shim.cc, built as a shared
# object of its own and embedded as bytes like init; vindex.c opens it from
# a memfd on first use, so sluice never links libstdc++ and only a process
# that builds or loads an HNSW graph maps it (docs/knowledge.md).
HNSW_CXXFLAGS := -std=c++17 -O2 -fPIC -fvisibility=hidden -Wall -Wextra -Werror -Isrc
$(BUILD)/libsluice-hnsw.so: src/knowledge/hnsw_shim.cc src/knowledge/hnsw_shim.h
	@mkdir -p $(dir $@)
	$(CXX) $(HNSW_CXXFLAGS) -shared -s -Wl,-z,defs -Wl,-z,noexecstack -Wl,--build-id=sha1 -o $@ $<

$(BUILD)/gen/hnsw_blob.c: $(BUILD)/libsluice-hnsw.so
	@mkdir -p $(dir $@)
	{ echo '#include <stddef.h>'; echo 'const unsigned char sl_hnsw_blob[] = {'; \
	  od -An -v -tu1 $< | sed 's/  */,/g; s/^,//; s/$$/,/'; echo '};'; \
	  echo 'const size_t sl_hnsw_blob_len = sizeof sl_hnsw_blob;'; } > $@

$(BUILD)/gen/hnsw_blob.o: $(BUILD)/gen/hnsw_blob.c
	$(CC) -c -O0 $< -o $@

# The web console's files (src/server/console/, flat) as C arrays with
# their names: sluice serve answers them from memory (server/console.h).
# The folder itself is a prerequisite, so a file added or removed counts.
CONSOLE_FILES := $(sort $(wildcard src/server/console/*))
$(BUILD)/gen/console_assets.c: $(CONSOLE_FILES) src/server/console
	@mkdir -p $(dir $@)
	{ echo '#include "server/console.h"'; i=0; \
	  for f in $(CONSOLE_FILES); do \
	    echo "static const unsigned char a$$i[] = {"; \
	    od -An -v -tu1 "$$f" | sed 's/  */,/g; s/^,//; s/$$/,/'; echo '0};'; i=$$((i+1)); \
	  done; \
	  echo 'const sl_console_asset sl_console_assets[] = {'; i=0; \
	  for f in $(CONSOLE_FILES); do \
	    echo "    {\"$$(basename $$f)\", a$$i, sizeof a$$i - 1},"; i=$$((i+1)); \
	  done; \
	  echo '    {0, 0, 0}};'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/console_assets.o: $(BUILD)/gen/console_assets.c src/server/console.h
	$(CC) -c -O0 -Isrc $< -o $@

$(LIB): $(OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/sluice: $(CLI_OBJ) $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(OBJ) $(LDLIBS)

# tests may compare with libm (sluice itself does not link it: core/math.h)
$(BUILD)/tests/%: tests/unit/%.c $(OBJ) tests/unit/tap.h tests/unit/util.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS) -lm

test: all
	@tests/run.sh $(BUILD)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	$(MAKE) BUILD=build-asan CC=clang OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" test

# libFuzzer targets (fuzz/fuzz_*.c) under ASan + UBSan; fuzz/run.sh SECONDS runs them.
# The library is compiled once with coverage (fuzzer-no-link) and shared by
# every target; UBSan aborts so libFuzzer records its findings as crashes.
FUZZ_TARGETS := $(patsubst fuzz/%.c,build-fuzz/%,$(wildcard fuzz/fuzz_*.c))
FUZZ_CFLAGS  := $(CSTD) -Isrc -MMD -MP -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
                -fno-sanitize-recover=all $(shell pkg-config --cflags $(PKGS))
FUZZ_OBJ     := $(SRC:%.c=build-fuzz/%.o) build-fuzz/gen/init_blob.o build-fuzz/gen/hnsw_blob.o \
                build-fuzz/gen/console_assets.o
.SECONDARY: $(FUZZ_OBJ)
fuzz: $(FUZZ_TARGETS)
build-fuzz/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
build-fuzz/gen/init_blob.o: $(BUILD)/gen/init_blob.c
	@mkdir -p $(dir $@)
	clang -c -O0 $< -o $@
build-fuzz/gen/hnsw_blob.o: $(BUILD)/gen/hnsw_blob.c
	@mkdir -p $(dir $@)
	clang -c -O0 $< -o $@
build-fuzz/gen/console_assets.o: $(BUILD)/gen/console_assets.c
	@mkdir -p $(dir $@)
	clang -c -O0 -Isrc $< -o $@
build-fuzz/fuzz_%: fuzz/fuzz_%.c $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) $(WARN) -fsanitize=fuzzer -Isrc -o $@ $< $(FUZZ_OBJ) $(LDLIBS) $(shell pkg-config --libs libarchive)

# Engine overhead and load time against the issue's targets and peers.
$(BUILD)/bench/engine_bench: bench/engine_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

# The local sandbox against bubblewrap, fork+exec and python3 (issue 3).
$(BUILD)/bench/sandbox_bench: bench/sandbox_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

# Model-call streaming: relay latency and memory per concurrent call (issue 4).
$(BUILD)/bench/llm_bench: bench/llm_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

# Agent step overhead and the first command of a run against bubblewrap (issue 5).
$(BUILD)/bench/agent_bench: bench/agent_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

bench-agent: $(BUILD)/bench/agent_bench
	@$(BUILD)/bench/agent_bench

bench-llm: $(BUILD)/bench/llm_bench
	@$(BUILD)/bench/llm_bench

# The tool node's and an agent's tool step's own costs (issue 15).
$(BUILD)/bench/tool_bench: bench/tool_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

bench-tools: $(BUILD)/bench/tool_bench
	@$(BUILD)/bench/tool_bench

# The MCP client against the transport under it: HTTP and stdio (docs/tools.md).
$(BUILD)/bench/mcp_bench: bench/mcp_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

bench-mcp: $(BUILD)/bench/mcp_bench
	@$(BUILD)/bench/mcp_bench

# The OpenAPI toolset's call overhead and document load time (docs/tools.md).
$(BUILD)/bench/openapi_bench: bench/openapi_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

bench-openapi: $(BUILD)/bench/openapi_bench
	@$(BUILD)/bench/openapi_bench

# sluice serve under load: runs/s, p99, 1,000 streaming clients, RSS (issue 6).
bench-serve: $(BUILD)/sluice
	@bench/serve_bench.sh $(BUILD)

# Event latency across processes: two servers on one PostgreSQL (issue 20).
bench-multi: $(BUILD)/sluice
	@bench/multi_bench.sh $(BUILD)

# Runs as jobs through PostgreSQL: runs/s and p99 through the queue beside
# one process, and two CPU-bound workers against one (bench/queue_bench.sh)
bench-queue: $(BUILD)/sluice
	@bench/queue_bench.sh $(BUILD)

# The web console in Debian's chromium: the runs page with 10,000 runs, live
# trace latency over a 200-node run, the files' size (issue 19).
bench-console: $(BUILD)/sluice
	@SLUICE=$(BUILD)/sluice node bench/console_bench.mjs

# Whole processes: sluice's start against /bin/true, sandbox run against bwrap (issue 14).
$(BUILD)/bench/startup_bench: bench/startup_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(OPT) -o $@ $<

bench-startup: $(BUILD)/sluice $(BUILD)/bench/startup_bench
	@bench/startup.sh $(BUILD)

bench: $(BUILD)/bench/engine_bench $(BUILD)/bench/sandbox_bench $(BUILD)/bench/llm_bench \
       $(BUILD)/bench/mcp_bench $(BUILD)/bench/tool_bench $(BUILD)/bench/openapi_bench \
       $(BUILD)/sluice $(BUILD)/bench/startup_bench $(BUILD)/bench/extract_bench
	@bench/run.sh $(BUILD)

# The Jinja2 engine against Python's Jinja2, in-process and spawned (issue 7).
$(BUILD)/bench/jinja_bench: bench/jinja_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS)

bench-jinja: $(BUILD)/bench/jinja_bench
	@$(BUILD)/bench/jinja_bench

# A PDF's text through the sandboxed pdftotext against pypdf (bench/README.md).
$(BUILD)/bench/extract_bench: bench/extract_bench.c $(OBJ) $(BUILD)/sluice
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -DSLUICE='"$(BUILD)/sluice"' -o $@ $< $(OBJ) $(LDLIBS)

bench-extract: $(BUILD)/bench/extract_bench
	@$(BUILD)/bench/extract_bench

# Vector search of a knowledge base against numpy's brute force (issue 18).
$(BUILD)/bench/knowledge_bench: bench/knowledge_bench.c $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(OBJ) $(LDLIBS) -lm

# Knowledge bases end to end (issue 18): hybrid search through sl_kb
# against numpy, and ingestion in MB/s.
$(BUILD)/bench/kb_bench: bench/kb_bench.c $(OBJ) $(BUILD)/sluice
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -DSLUICE='"$(BUILD)/sluice"' -o $@ $< $(OBJ) $(LDLIBS) -lm

bench-knowledge: $(BUILD)/bench/knowledge_bench $(BUILD)/bench/kb_bench
	@$(BUILD)/bench/knowledge_bench
	@$(BUILD)/bench/kb_bench

bench-kb: $(BUILD)/bench/kb_bench
	@$(BUILD)/bench/kb_bench

bench-sandbox: $(BUILD)/bench/sandbox_bench
	@$(BUILD)/bench/sandbox_bench

# Header dependencies written by -MMD.
-include $(shell find $(BUILD) build-fuzz -name '*.d' 2>/dev/null)

clean:
	rm -rf build build-asan build-fuzz
