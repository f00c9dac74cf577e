# The two commands of README.md. Each installs what is missing, builds in Release, and runs.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps build run test sanitize fuzz bench format clean

deps:
	bash scripts/install-deps.sh

# PGO=1 (the default): profile-guided, in three steps (docs/performance.md): an instrumented
# wafersim in $(BUILD)-pgo, a few seconds of typical jobs on it (scripts/pgo-train.sh), then the
# build itself with their profile. PGO=0: a plain Release build.
PGO ?= 1
PROFILES = $(abspath $(BUILD))/pgo

build: deps
ifeq ($(PGO),1)
	cmake -S . -B $(BUILD)-pgo -DCMAKE_BUILD_TYPE=Release -DWAFERSIM_PGO=GENERATE \
	  -DWAFERSIM_PGO_DIR=$(PROFILES)
	cmake --build $(BUILD)-pgo -j $(JOBS) --target wafersim
	bash scripts/pgo-train.sh $(BUILD)-pgo/wafersim $(PROFILES)
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DWAFERSIM_PGO=USE \
	  -DWAFERSIM_PGO_DIR=$(PROFILES)
else
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DWAFERSIM_PGO=OFF
endif
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/wafersim run --platform configs/wafer_mesh_4x2.yaml \
	  --workload tests/data/chakra-traces/text/Resnet50_DataParallel --out out/default

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer, in build-sanitize/.
sanitize: deps
	cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWAFERSIM_SANITIZE=ON
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS)

# libFuzzer on the trace reader and the config readers, FUZZ_SECONDS each (not part of `make test`).
FUZZ_SECONDS ?= 600
fuzz: deps
	bash scripts/install-deps.sh --fuzz
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWAFERSIM_FUZZ=ON
	cmake --build build-fuzz -j $(JOBS) --target fuzz_trace fuzz_config
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

bench: build
	$(BUILD)/bench/wafersim_bench

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

clean:
	rm -rf $(BUILD) $(BUILD)-pgo build-sanitize build-fuzz out
