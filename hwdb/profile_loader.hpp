#pragma once
/// Calibration profiles: efficiency-profile YAML files (hwdb/profiles/*.yaml, written by
/// `gpuplan calib fit` and `gpuplan-calib`) read into model::EfficiencyProfile, with their
/// provenance, held-out residuals and, optionally, the raw measured points. The format is
/// documented in docs/calibration.md. Errors are ConfigError with file:line:column.

#include "model/efficiency.hpp"
#include "model/hardware_spec.hpp"
#include "model/measurement.hpp"
#include "model/units.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// The error of a profile on one operator class, as the fit measured it.
struct ResidualSummary {
    std::string op_class; ///< model::to_string(OpClass), or "all"
    bool fitted = true;   ///< false: the class's curve was kept from the base profile
    int train_points = 0;
    int held_out_points = 0;
    double train_mape = 0;   ///< mean |relative error| on the points the fit saw
    double mape = 0;         ///< the same on held-out points
    double median = 0;       ///< median |relative error|, held out
    double p90 = 0;          ///< 90th percentile |relative error|, held out
    double worst = 0;        ///< largest |relative error|, held out
    std::string worst_point; ///< where the worst held-out point comes from (file:row, shape)
    double default_mape = 0; ///< held-out MAPE of the uncalibrated default_profile()
    double default_p90 = 0;
    /// A GEMM kernel class (model/gemm_class.hpp, "nvfp4", ...) when the row is the errors of
    /// that class's points within op_class; "" for the whole class.
    std::string kernel_class;
    friend bool operator==(const ResidualSummary&, const ResidualSummary&) = default;
};

/// An alpha-beta fit (time = alpha + message / bandwidth) of one collective on one link type
/// and group size.
struct CommLinkFit {
    std::string collective; ///< "all_reduce" or "send_recv"
    std::string link;       ///< hwdb interconnect name
    int group = 2;          ///< GPUs in the collective
    int nodes = 1;
    Seconds alpha;            ///< fixed cost per call
    BytesPerSecond bandwidth; ///< message bytes per second of the size-dependent part
    int points = 0;
    double mape = 0;
    friend bool operator==(const CommLinkFit&, const CommLinkFit&) = default;
};

/// A constant a measurement harness adds to host-timed calls (PyTorch dispatch, launch and
/// synchronize), fitted per data set and applied only to points of that set.
struct TimingOffset {
    std::string source; ///< Measurement::source tag
    Seconds offset;
    int points = 0;
    friend bool operator==(const TimingOffset&, const TimingOffset&) = default;
};

/// Everything a profile file holds.
struct ProfileFile {
    /// The coefficients; provenance.file is the path it was read from, provenance.description
    /// the file's description with the GPU and date appended.
    model::EfficiencyProfile profile;
    std::string gpu;                  ///< hwdb accelerator name the profile was measured on
    std::string architecture;         ///< its architecture ("ampere", "hopper"), for borrowing
    std::string description;          ///< provenance.description as written
    std::string command;              ///< the command line that produced the file
    std::string date;                 ///< YYYY-MM-DD
    std::vector<std::string> sources; ///< data files, as owner/repo@commit:path where known
    std::vector<ResidualSummary> residuals;
    std::vector<CommLinkFit> comm_links;
    std::vector<TimingOffset> timing_offsets;
    std::vector<model::Measurement> points; ///< optional raw points
    friend bool operator==(const ProfileFile&, const ProfileFile&) = default;
};

/// Parses a profile file's text; `file` names it in errors and becomes provenance.file.
/// Throws ConfigError.
[[nodiscard]] ProfileFile parse_profile_file(std::string_view text, const std::string& file);

/// Reads and parses a profile file. Throws InputError when it cannot be read.
[[nodiscard]] ProfileFile read_profile_file(const std::filesystem::path& path);

/// The efficiency profile of a profile file's text.
[[nodiscard]] model::EfficiencyProfile parse_profile(std::string_view text,
                                                     const std::string& file);

/// The efficiency profile stored at `path`.
[[nodiscard]] model::EfficiencyProfile load_profile(const std::filesystem::path& path);

/// A points file: measured points and the data files they were read from.
struct PointSet {
    std::vector<std::string> sources; ///< citations of the data files (owner/repo@commit:path)
    std::vector<model::Measurement> points;
    friend bool operator==(const PointSet&, const PointSet&) = default;
};

/// The `sources:` and `points:` of a points file (`schema: 1`, optional `sources:`, `points:`)
/// or of a profile file (its provenance sources). Throws ConfigError.
[[nodiscard]] PointSet parse_point_set(std::string_view text, const std::string& file);

/// The points of a points or profile file (parse_point_set(...).points).
[[nodiscard]] std::vector<model::Measurement> parse_points(std::string_view text,
                                                           const std::string& file);

/// The point with the given fields as one YAML flow mapping (no trailing newline), the format
/// parse_points reads.
[[nodiscard]] std::string point_to_yaml(const model::Measurement& m);

/// Like find_profile_for_gpu, but the whole file (with its harness offsets and residuals); an
/// extrapolated profile has its descriptions rewritten as find_profile_for_gpu says.
[[nodiscard]] std::optional<ProfileFile>
find_profile_file_for_gpu(const std::vector<std::filesystem::path>& folders,
                          const model::AcceleratorSpec& gpu);

/// The profile for `gpu` found in `folders` (each searched recursively for *.yaml, in sorted
/// order): one measured on that accelerator (name or alias), else one measured on another GPU
/// of the same architecture, whose provenance description then starts with "extrapolated from
/// <gpu> (same architecture '<arch>')". nullopt when neither exists; the caller then uses
/// default_profile(). Folders that do not exist are skipped. Throws ConfigError on a bad file.
[[nodiscard]] std::optional<model::EfficiencyProfile>
find_profile_for_gpu(const std::vector<std::filesystem::path>& folders,
                     const model::AcceleratorSpec& gpu);

/// The built-in profile folder (hwdb/profiles of the source tree).
[[nodiscard]] std::filesystem::path builtin_profile_folder();

/// A file path as reports show it: a shipped hwdb file as "hwdb/profiles/NAME.yaml", a file under
/// the working folder relative to it, anything else as given. Reports are shared, and an absolute
/// path names a user's home and checkout rather than the file.
[[nodiscard]] std::string shown_path(const std::string& file);

/// The `profiles/` folder of each hwdb folder, in the same order: where the CLI and the GUI
/// look for efficiency profiles (a later folder's profile for the same GPU wins).
[[nodiscard]] std::vector<std::filesystem::path>
profile_folders(const std::vector<std::filesystem::path>& hwdb_folders);

} // namespace gpuplan::hwdb
