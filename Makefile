# The two set-up commands of the README:
#   make run   installs missing Debian packages, configures, builds (Release), registers the
#              Python module with /usr/bin/python3 and runs gpuplan on examples/quickstart.yaml
#   make test  the same set-up, then the whole test suite with ctest
# Repeated runs skip what is already done (dpkg check, CMake cache, Ninja's dependency graph).
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
GPUPLAN := $(BUILD)/cli/gpuplan
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: run test deps configure build fuzz clean golden

run: build
	$(GPUPLAN) estimate examples/quickstart.yaml

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

deps:
	@./scripts/install-deps.sh

$(BUILD)/build.ninja: | deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

configure: deps $(BUILD)/build.ninja

build: configure
	cmake --build $(BUILD) -j $(JOBS)
	@scripts/python-path.sh $(BUILD)

# Refreshes tests/golden/ after an intended, reviewed change of output (scripts/golden.sh).
golden: build
	scripts/golden.sh --update $(GPUPLAN)

clean:
	rm -rf $(BUILD)
