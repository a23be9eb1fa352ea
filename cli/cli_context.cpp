#include "cli/cli_context.hpp"

#include <ostream>

namespace gpuplan::cli {

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
