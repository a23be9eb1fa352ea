#pragma once
/// `--plot DIR` of `gpuplan estimate` and `gpuplan simulate`: the desktop app's charts as PNG
/// files, drawn without a display. The CLI does not link Qt; it writes the effective scenario
/// to DIR/scenario.yaml and runs `gpuplan-plot` (gui/plot_main.cpp, built beside `gpuplan` when
/// Qt6 is found) on it with Qt's offscreen platform.

#include "model/scenario.hpp"

#include <iosfwd>
#include <optional>
#include <string>

namespace gpuplan::cli {

/// Writes DIR/scenario.yaml and runs gpuplan-plot on it (with --simulate and --requests when
/// given); gpuplan-plot's report ("wrote DIR/memory.png", ...) goes to stderr, after `log` is
/// flushed. Throws InputError when gpuplan-plot is not installed beside this program or fails.
void write_plots(const model::Scenario& s, const std::string& dir, bool simulate,
                 std::optional<int> requests, std::ostream& log);

} // namespace gpuplan::cli
