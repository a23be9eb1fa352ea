#pragma once
/// The one reader and the one writer for every file gpuplan reads or writes (hwdb YAML,
/// scenarios, traces, profiles, config.json, calibration points; imported models, profiles,
/// scenarios and `simulate --out` folders). Front ends (cli/, gui/, calib/) call these instead
/// of opening streams themselves, so that every input is bounded while it is read and every
/// output is either complete or absent.
///
/// Reading stops as soon as a file passes its size limit, so `/dev/zero` or an endless pipe is
/// refused after `limit` bytes instead of filling memory.
///
/// Writing policy (write_text_file):
///   - a regular file, or a name that does not exist yet, is written to a temporary file in the
///     same folder, flushed to disk, checked, and renamed over the name; on any failure the
///     temporary file is removed and the old file, if any, is left untouched;
///   - a symbolic link is followed: its final target is replaced that way and the link stays;
///   - a character device or a pipe (`/dev/null`, `/dev/stdout`, `/dev/full`, a FIFO) cannot be
///     replaced atomically, so it is written in place and every write is checked;
///   - a folder, a block device or a socket is refused.
/// Every failure is an InputError naming the path and the system's reason (strerror).

#include <cstddef>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// Largest YAML or JSON input (hwdb entries, scenarios, profiles, points, config.json): 16 MiB.
inline constexpr std::size_t kMaxInputBytes = std::size_t{16} << 20;
/// Largest CSV input (traces, measured kernel times, power samples): 256 MiB.
inline constexpr std::size_t kMaxTableBytes = std::size_t{256} << 20;

/// The whole content of the file at `path`. `what` names the kind of file in messages
/// ("scenario file", "trace"). Throws InputError when the path is a folder, cannot be opened or
/// read, or holds more than `limit` bytes; the size is checked while reading, so the cost is at
/// most `limit` bytes of memory and reading.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& path, std::string_view what,
                                         std::size_t limit = kMaxInputBytes);

/// Writes `text` to `path` by the policy above. Throws InputError on failure (the path and
/// strerror), after removing its temporary file.
void write_text_file(const std::filesystem::path& path, std::string_view text);

/// An output folder written under a temporary name next to its final name and renamed into
/// place by commit(), so that an interrupted or failed run leaves no half-written folder. The
/// destructor removes the temporary folder unless commit() succeeded.
///
/// A final folder that already exists is replaced only when it is empty or holds nothing but
/// files named in `replaceable` (the names a previous run writes there); otherwise the
/// constructor refuses it, so that `--out .` can never delete unrelated files.
class OutputFolder {
  public:
    /// Creates the temporary folder (and missing parent folders). Throws InputError when
    /// `final_path` is not usable (a file, a folder holding other files, no permission).
    OutputFolder(const std::filesystem::path& final_path, std::vector<std::string> replaceable);
    ~OutputFolder();
    OutputFolder(const OutputFolder&) = delete;
    OutputFolder& operator=(const OutputFolder&) = delete;

    /// The temporary folder files are written into before commit().
    [[nodiscard]] const std::filesystem::path& staging() const { return staging_; }
    /// The folder's final name.
    [[nodiscard]] const std::filesystem::path& final_path() const { return final_; }

    /// Writes `text` as the file `name` in the temporary folder. Throws InputError on failure.
    void write(const std::string& name, std::string_view text);
    /// Streams the file `name` into the temporary folder through `fill`, then flushes and checks
    /// the stream. For files too large to build in memory. Throws InputError on failure.
    void write_stream(const std::string& name, const std::function<void(std::ostream&)>& fill);

    /// Moves the folder to its final name. A previous run's folder is swapped out in one step
    /// (renameat2 RENAME_EXCHANGE; two renames where the file system cannot) and deleted.
    /// Throws InputError on failure; the temporary folder is removed then.
    void commit();

  private:
    std::filesystem::path final_;
    std::filesystem::path staging_;
    std::vector<std::string> replaceable_;
    bool committed_ = false;
};

} // namespace gpuplan::hwdb
