#include "cli/cli_context.hpp"

namespace gpuplan::cli {

const hwdb::Database& CliContext::db() {
    if (!db_) {
        db_ = hwdb::Database::load(hwdb::default_folders(extra_hwdb));
    }
    return *db_;
}

}  // namespace gpuplan::cli
