#include "hwdb/file_io.hpp"

#include "model/error.hpp"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuplan::hwdb {
namespace {

namespace fs = std::filesystem;

std::string why(int err) {
    return std::strerror(err);
}

std::string mib(std::size_t bytes) {
    return std::to_string(bytes >> 20) + " MiB";
}

// Closes a file descriptor on every path out of a function.
class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    [[nodiscard]] int get() const { return fd_; }
    // Closes now and returns 0 or the errno of a failed close (NFS reports write errors there).
    int close() {
        const int rc = ::close(fd_);
        fd_ = -1;
        return rc == 0 ? 0 : errno;
    }

  private:
    int fd_;
};

// Writes all of `text`, retrying short writes; returns 0 or errno.
int write_all(int fd, std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        done += static_cast<std::size_t>(n);
    }
    return 0;
}

// A name no other writer uses at the same time: the process id, a per-process counter and a
// random number, so two gpuplan processes writing into one folder never share a temporary.
std::string unique_suffix() {
    static std::atomic<unsigned> counter{0};
    thread_local std::mt19937 rng(std::random_device{}());
    return std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
           std::to_string(rng() % 1000000);
}

std::string hint_for(int err) {
    switch (err) {
    case ENOSPC:
    case EDQUOT: return "free some disk space or write elsewhere";
    case EACCES:
    case EPERM:
    case EROFS: return "check the folder's permissions or write elsewhere";
    case ENOENT:
    case ENOTDIR: return "check that the folder exists";
    default: return "write elsewhere";
    }
}

[[noreturn]] void fail_write(const fs::path& shown, int err) {
    throw InputError(shown.string() + ": cannot write the file (" + why(err) + "); " +
                     hint_for(err));
}

// Follows symbolic links to the final target (which may not exist yet), so that writing
// through a link replaces its target and leaves the link in place.
fs::path resolve_links(const fs::path& path) {
    fs::path p = path;
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        const auto st = fs::symlink_status(p, ec);
        if (ec || st.type() != fs::file_type::symlink) {
            return p;
        }
        const fs::path target = fs::read_symlink(p, ec);
        if (ec) {
            return p;
        }
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    throw InputError(path.string() + ": too many levels of symbolic links; give the file itself");
}

// Writes into a character device or pipe in place, checking every write.
void write_in_place(const fs::path& shown, const fs::path& target, std::string_view text) {
    Fd fd(::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0) {
        fail_write(shown, errno);
    }
    if (const int err = write_all(fd.get(), text)) {
        fail_write(shown, err);
    }
    if (const int err = fd.close()) {
        fail_write(shown, err);
    }
}

} // namespace

std::string read_text_file(const fs::path& path, std::string_view what, std::size_t limit) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        throw InputError(path.string() + ": is a folder, not a " + std::string(what) +
                         "; give the path of the file itself");
    }
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0) {
        const int err = errno;
        throw InputError(path.string() + ": cannot open the " + std::string(what) + " (" +
                         why(err) + "); check the path");
    }
    const auto too_large = [&] {
        return InputError(path.string() + ": the " + std::string(what) + " is larger than " +
                          mib(limit) +
                          (limit <= kMaxInputBytes ? "; this is not a gpuplan file"
                                                   : "; split it into smaller files"));
    };
    std::string text;
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode)) {
        if (static_cast<std::uintmax_t>(st.st_size) > limit) {
            throw too_large();
        }
        text.reserve(static_cast<std::size_t>(st.st_size));
    }
    // The limit is checked per block, so a device or pipe without end costs `limit` at most.
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            const int err = errno;
            throw InputError(path.string() + ": cannot read the " + std::string(what) + " (" +
                             why(err) + ")");
        }
        if (n == 0) {
            break;
        }
        if (text.size() + static_cast<std::size_t>(n) > limit) {
            throw too_large();
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    return text;
}

void write_text_file(const fs::path& path, std::string_view text) {
    if (path.empty()) {
        throw InputError("an output file name is empty; give a file name");
    }
    const fs::path target = resolve_links(path);
    std::error_code ec;
    const auto st = fs::status(target, ec);
    mode_t mode = 0666; // a new file gets the umask's permissions, as any other program's
    bool keep_mode = false;
    switch (st.type()) {
    case fs::file_type::not_found:
    case fs::file_type::none: break;
    case fs::file_type::regular: {
        struct stat s {};
        if (::stat(target.c_str(), &s) == 0) {
            mode = s.st_mode & 07777;
            keep_mode = true;
        }
        break;
    }
    case fs::file_type::character:
    case fs::file_type::fifo: write_in_place(path, target, text); return;
    case fs::file_type::directory:
        throw InputError(path.string() + ": is a folder; give a file name, e.g. " +
                         (path / "out.yaml").string());
    default:
        throw InputError(path.string() +
                         ": is not a regular file, a character device or a pipe; give a file name");
    }
    const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    const fs::path tmp = dir / ("." + target.filename().string() + ".tmp-" + unique_suffix());
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
    if (fd.get() < 0) {
        fail_write(path, errno);
    }
    const auto fail = [&](int err) {
        ::unlink(tmp.c_str());
        fail_write(path, err);
    };
    if (keep_mode && ::fchmod(fd.get(), mode) != 0) {
        fail(errno);
    }
    if (const int err = write_all(fd.get(), text)) {
        fail(err);
    }
    // Some file systems report a full disk only when the data reaches it.
    if (::fsync(fd.get()) != 0 && errno != EINVAL && errno != EROFS) {
        fail(errno);
    }
    if (const int err = fd.close()) {
        fail(err);
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        fail(errno);
    }
}

OutputFolder::OutputFolder(const fs::path& final_path, std::vector<std::string> replaceable)
    : replaceable_(std::move(replaceable)) {
    if (final_path.empty()) {
        throw InputError("an output folder name is empty; give a folder name");
    }
    // "out/" names the folder "out": strip the trailing separator so the parent is right.
    final_ = resolve_links(final_path.has_filename() ? final_path : final_path.parent_path());
    std::error_code ec;
    const auto st = fs::status(final_, ec);
    if (st.type() == fs::file_type::directory) {
        for (const auto& entry : fs::directory_iterator(final_, ec)) {
            const std::string name = entry.path().filename().string();
            bool known = false;
            for (const auto& r : replaceable_) {
                known = known || r == name;
            }
            if (!known || !entry.is_regular_file()) {
                throw InputError(final_path.string() + ": the folder exists and holds '" + name +
                                 "', which gpuplan did not write; choose a new or empty folder");
            }
        }
        if (ec) {
            throw InputError(final_path.string() + ": cannot read the folder (" + ec.message() +
                             "); choose another folder");
        }
    } else if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::none) {
        throw InputError(final_path.string() +
                         ": exists and is not a folder; choose a folder name");
    }
    const fs::path parent = final_.parent_path().empty() ? fs::path(".") : final_.parent_path();
    // Missing parents are created, as `mkdir -p` would (`--out runs/today` with no runs/ yet).
    fs::create_directories(parent, ec);
    if (ec) {
        throw InputError(final_path.string() + ": cannot create the folder '" + parent.string() +
                         "' (" + ec.message() + "); choose another folder");
    }
    staging_ = parent / ("." + final_.filename().string() + ".tmp-" + unique_suffix());
    if (::mkdir(staging_.c_str(), 0777) != 0) {
        const int err = errno;
        throw InputError(final_path.string() + ": cannot create the output folder (" + why(err) +
                         "); " + hint_for(err));
    }
}

OutputFolder::~OutputFolder() {
    if (!committed_) {
        std::error_code ec;
        fs::remove_all(staging_, ec);
    }
}

void OutputFolder::write(const std::string& name, std::string_view text) {
    const fs::path p = staging_ / name;
    Fd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
    if (fd.get() < 0) {
        fail_write(final_ / name, errno);
    }
    if (const int err = write_all(fd.get(), text)) {
        fail_write(final_ / name, err);
    }
    if (::fsync(fd.get()) != 0 && errno != EINVAL && errno != EROFS) {
        fail_write(final_ / name, errno);
    }
    if (const int err = fd.close()) {
        fail_write(final_ / name, err);
    }
}

void OutputFolder::write_stream(const std::string& name,
                                const std::function<void(std::ostream&)>& fill) {
    const fs::path p = staging_ / name;
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    if (!out) {
        fail_write(final_ / name, errno != 0 ? errno : EIO);
    }
    errno = 0;
    fill(out);
    out.flush();
    if (!out) {
        fail_write(final_ / name, errno != 0 ? errno : EIO);
    }
    out.close();
    if (!out) {
        fail_write(final_ / name, errno != 0 ? errno : EIO);
    }
}

void OutputFolder::commit() {
    std::error_code ec;
    if (fs::is_directory(final_, ec)) {
        // Only a previous run's files are in it (checked when this folder was created). Swap
        // the two folders in one step where the file system can (Linux renameat2), so that
        // there is no moment without a complete folder; then delete the old one.
        if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) ==
            0) {
            committed_ = true;
            fs::remove_all(staging_, ec); // now the previous run's folder
            return;
        }
        // Otherwise move it aside, move the new one in, then delete the old one.
        const fs::path old =
            staging_.parent_path() / ("." + final_.filename().string() + ".old-" + unique_suffix());
        if (::rename(final_.c_str(), old.c_str()) != 0) {
            const int err = errno;
            throw InputError(final_.string() + ": cannot replace the folder (" + why(err) + "); " +
                             hint_for(err));
        }
        if (::rename(staging_.c_str(), final_.c_str()) != 0) {
            const int err = errno;
            ::rename(old.c_str(), final_.c_str());
            throw InputError(final_.string() + ": cannot move the output folder into place (" +
                             why(err) + "); " + hint_for(err));
        }
        committed_ = true;
        fs::remove_all(old, ec);
        return;
    }
    if (::rename(staging_.c_str(), final_.c_str()) != 0) {
        const int err = errno;
        throw InputError(final_.string() + ": cannot move the output folder into place (" +
                         why(err) + "); " + hint_for(err));
    }
    committed_ = true;
}

} // namespace gpuplan::hwdb
