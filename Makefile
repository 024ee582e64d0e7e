# infermon — top-level wrapper around CMake/ctest.
#   make demo    build and run the live demo (simulator + daemon)
#   make test    install deps, build Release and ASan+UBSan, run every test,
#                the TSan run of the concurrency tests, a short fuzz run per
#                target and the format check
#   make bench   build and run the benchmarks (peers in the same run)
#   make fuzz FUZZ_SECONDS=N   run every fuzz target for N seconds
#   make test-tsan  ThreadSanitizer build of the concurrency tests (one engine and
#                one HTTP server used by many threads) and their run
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 30
SMOKE_FUZZ_SECONDS ?= 20
BUILD := build
CMAKE_FLAGS ?=

.PHONY: all deps build build-asan build-fuzz test test-release test-asan test-tsan fuzz fuzz-smoke \
        bench demo clean format format-check checksrc

all: build

deps:
	@bash scripts/install-deps.sh
	@bash scripts/web-deps.sh

build: deps
	@cmake -S . -B $(BUILD)/release -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/release -j $(JOBS)
	@ln -sf release/infermon $(BUILD)/infermon

build-asan: deps
	@cmake -S . -B $(BUILD)/asan -DCMAKE_BUILD_TYPE=Debug -DIM_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/asan -j $(JOBS)

build-fuzz: deps
	@CC=clang cmake -S . -B $(BUILD)/fuzz -DCMAKE_BUILD_TYPE=Debug -DIM_FUZZ=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/fuzz -j $(JOBS) --target fuzz_all

test-release: build
	@cd $(BUILD)/release && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

test-asan: build-asan
	@cd $(BUILD)/asan && ctest --output-on-failure -j $(JOBS) -LE nosan $(CTEST_ARGS)

# Only the tests that exercise threads: a whole TSan build would double the time
# of `make test`; this part takes 3-4 minutes on 2 busy cores.
TSAN_TESTS := test_concurrency test_parallel test_http test_scrape_workers test_tsdb_frame_cache
TSAN_RE := $(shell echo $(TSAN_TESTS) | tr ' ' '|')
test-tsan: deps
	@cmake -S . -B $(BUILD)/tsan -DCMAKE_BUILD_TYPE=Debug -DIM_TSAN=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)/tsan -j $(JOBS) --target $(TSAN_TESTS)
	@cd $(BUILD)/tsan && ctest --output-on-failure -j $(JOBS) -R '/($(TSAN_RE))$$'

test: format-check checksrc test-release test-asan test-tsan fuzz-smoke
	@echo "make test: all passed"

fuzz: build-fuzz
	@bash scripts/run-fuzz.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

fuzz-smoke: build-fuzz
	@bash scripts/run-fuzz.sh $(BUILD)/fuzz $(SMOKE_FUZZ_SECONDS)

bench: build
	@bash scripts/run-bench.sh $(BUILD)/release

demo: build
	@$(BUILD)/release/infermon demo $(DEMO_ARGS)

format:
	@git ls-files -co --exclude-standard '*.c' '*.h' | grep -v '^web/node_modules' | xargs -r clang-format -i

format-check:
	@bash scripts/format-check.sh

checksrc:
	@bash scripts/checksrc

clean:
	rm -rf $(BUILD)
