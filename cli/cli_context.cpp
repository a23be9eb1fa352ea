#include "cli/cli_context.hpp"

#include "hwdb/error_bands_io.hpp"
#include "hwdb/profile_loader.hpp"

#include <ostream>
#include <system_error>

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

std::string shown_path(const std::string& file) {
    namespace fs = std::filesystem;
    const fs::path path(file);
    if (file.empty() || !path.is_absolute()) {
        return file;
    }
    const auto inside = [&](const fs::path& folder) -> std::optional<fs::path> {
        const fs::path rel = path.lexically_normal().lexically_relative(folder.lexically_normal());
        if (rel.empty() || *rel.begin() == "..") {
            return std::nullopt;
        }
        return rel;
    };
    const fs::path builtin = hwdb::builtin_profile_folder().parent_path(); // .../hwdb
    if (const auto rel = inside(builtin)) {
        return (fs::path("hwdb") / *rel).generic_string();
    }
    std::error_code ec;
    if (const fs::path cwd = fs::current_path(ec); !ec) {
        if (const auto rel = inside(cwd)) {
            return rel->generic_string();
        }
    }
    return file;
}

} // namespace gpuplan::cli
