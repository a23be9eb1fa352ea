#pragma once
/// Output files of the command line. Every file a command writes goes through here, so it is
/// written by hwdb's one writer (hwdb/file_io.hpp: temporary file in the same folder, flushed,
/// checked, renamed into place; links followed; devices and pipes written in place) and never
/// after a SIGINT or SIGTERM. The one exception is `gpuplan sweep`, whose table holds complete
/// rows only: after a signal it still writes the rows finished (docs/sweep.md).

#include "cli/interrupt.hpp"
#include "hwdb/file_io.hpp"

#include <filesystem>
#include <string_view>

namespace gpuplan::cli {

/// Writes `text` to `path` unless a signal has arrived (then throws Interrupted). Throws
/// InputError with the path and the system's reason when the file cannot be written.
inline void write_output_file(const std::filesystem::path& path, std::string_view text) {
    throw_if_interrupted();
    hwdb::write_text_file(path, text);
}

} // namespace gpuplan::cli
