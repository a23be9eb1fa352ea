#include "cli/cli_context.hpp"

#include "hwdb/error_bands_io.hpp"

#include <ostream>

namespace gpuplan::cli {

const model::ErrorBands& CliContext::error_bands() {
    if (!bands_) {
        bands_ = hwdb::load_error_bands(hwdb::default_folders(extra_hwdb));
    }
    return *bands_;
}

const hwdb::Database& CliContext::db() {
    if (!db_) {
        db_ = hwdb::Database::load(hwdb::default_folders(extra_hwdb));
        // Which entry wins when folders define the same name is never silent.
        if (err != nullptr) {
            for (const auto& note : db_->notes()) {
                *err << "note: hwdb: " << note << '\n';
            }
        }
    }
    return *db_;
}

} // namespace gpuplan::cli
