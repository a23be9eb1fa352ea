// The one reader and writer (hwdb/file_io.hpp): inputs are bounded while they are read, outputs
// are complete or absent, links are followed, devices are written in place, and every failure
// names the path and the system's reason.
#include "hwdb/file_io.hpp"

#include "hwdb/database.hpp"
#include "hwdb/profile_loader.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/trace_loader.hpp"
#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

using namespace gpuplan;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test, removed afterwards.
class TempDir {
  public:
    TempDir() {
        path_ = fs::temp_directory_path() /
                ("gpuplan-file-io-" + std::to_string(::getpid()) + "-" + std::to_string(count_++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    [[nodiscard]] const fs::path& path() const { return path_; }

  private:
    fs::path path_;
    static inline int count_ = 0;
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

// Names in `dir`, to show that no temporary file or folder stayed behind.
std::size_t entries(const fs::path& dir) {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) {
        ++n;
    }
    return n;
}

} // namespace

TEST(ReadTextFile, ReadsTheWholeFile) {
    TempDir d;
    const std::string text = "schema: 1\n" + std::string(100000, '#') + "\n";
    std::ofstream(d.path() / "a.yaml", std::ios::binary) << text;
    EXPECT_EQ(hwdb::read_text_file(d.path() / "a.yaml", "file"), text);
}

TEST(ReadTextFile, StopsAtTheLimitWhileReadingADeviceWithoutEnd) {
    // /dev/zero never ends and has no size: only a check while reading can stop it.
    const std::string e =
        error_of([] { (void)hwdb::read_text_file("/dev/zero", "scenario file"); });
    EXPECT_NE(e.find("/dev/zero: the scenario file is larger than 16 MiB"), std::string::npos) << e;
    const std::string small =
        error_of([] { (void)hwdb::read_text_file("/dev/zero", "trace", std::size_t{1} << 20); });
    EXPECT_NE(small.find("larger than 1 MiB"), std::string::npos) << small;
}

TEST(ReadTextFile, RefusesARegularFileOverTheLimitBeforeReadingIt) {
    TempDir d;
    std::ofstream(d.path() / "big.csv", std::ios::binary) << std::string(2000, 'x');
    const std::string e =
        error_of([&] { (void)hwdb::read_text_file(d.path() / "big.csv", "trace", 1000); });
    EXPECT_NE(e.find("big.csv: the trace is larger than"), std::string::npos) << e;
}

TEST(ReadTextFile, AFolderIsNamedAsAFolder) {
    TempDir d;
    const std::string e = error_of([&] { (void)hwdb::read_text_file(d.path(), "scenario file"); });
    EXPECT_NE(e.find(d.path().string() + ": is a folder, not a scenario file"), std::string::npos)
        << e;
    // The scenario loader says so too (it said "file is empty").
    const hwdb::Database db;
    const std::string s = error_of([&] { (void)hwdb::load_scenario(d.path(), db); });
    EXPECT_NE(s.find("is a folder, not a scenario file"), std::string::npos) << s;
    EXPECT_EQ(s.find("empty"), std::string::npos) << s;
}

TEST(ReadTextFile, AMissingFileGivesTheSystemReason) {
    const std::string e =
        error_of([] { (void)hwdb::read_text_file("/no/such/file.yaml", "profile"); });
    EXPECT_NE(e.find("/no/such/file.yaml: cannot open the profile (No such file or directory)"),
              std::string::npos)
        << e;
}

TEST(WriteTextFile, WritesANewFileAndReplacesAnOldOneKeepingItsMode) {
    TempDir d;
    const fs::path f = d.path() / "out.yaml";
    hwdb::write_text_file(f, "one\n");
    EXPECT_EQ(slurp(f), "one\n");
    ASSERT_EQ(::chmod(f.c_str(), 0640), 0);
    hwdb::write_text_file(f, "two\n");
    EXPECT_EQ(slurp(f), "two\n");
    struct stat st {};
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u);
    EXPECT_EQ(entries(d.path()), 1u); // no temporary file left
}

TEST(WriteTextFile, WritesThroughASymlinkAndKeepsTheLink) {
    TempDir d;
    const fs::path target = d.path() / "real.yaml";
    const fs::path link = d.path() / "link.yaml";
    std::ofstream(target) << "old\n";
    fs::create_symlink("real.yaml", link);
    hwdb::write_text_file(link, "new\n");
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(slurp(target), "new\n");
    EXPECT_EQ(entries(d.path()), 2u);
}

TEST(WriteTextFile, WritesADeviceInPlaceAndReportsAFullDisk) {
    hwdb::write_text_file("/dev/null", "discarded\n");
    // /dev/full fails every write with ENOSPC, as a full disk does. It must stay a device
    // (the old writer renamed a regular file over it when run as root).
    const std::string e = error_of([] { hwdb::write_text_file("/dev/full", "x\n"); });
    EXPECT_NE(
        e.find("/dev/full: cannot write the file (No space left on device); free some disk space"),
        std::string::npos)
        << e;
    EXPECT_EQ(fs::status("/dev/full").type(), fs::file_type::character);
}

TEST(WriteTextFile, RefusesAFolderAndLeavesNoTemporaryOnFailure) {
    TempDir d;
    const std::string e = error_of([&] { hwdb::write_text_file(d.path(), "x"); });
    EXPECT_NE(e.find(d.path().string() + ": is a folder; give a file name"), std::string::npos)
        << e;
    const std::string m = error_of([&] { hwdb::write_text_file(d.path() / "no" / "x.yaml", "x"); });
    EXPECT_NE(m.find("x.yaml: cannot write the file (No such file or directory); check that the "
                     "folder exists"),
              std::string::npos)
        << m;
    EXPECT_EQ(entries(d.path()), 0u);
}

TEST(OutputFolder, AppearsOnlyWhenCommitted) {
    TempDir d;
    const fs::path out = d.path() / "run";
    {
        hwdb::OutputFolder folder(out, {"a.csv"});
        folder.write("a.csv", "1\n");
        EXPECT_FALSE(fs::exists(out)); // written under a temporary name
        // Destroyed without commit, as when a signal or an error ends the run.
    }
    EXPECT_FALSE(fs::exists(out));
    EXPECT_EQ(entries(d.path()), 0u);
    {
        hwdb::OutputFolder folder(out, {"a.csv", "b.json"});
        folder.write("a.csv", "1\n");
        folder.write_stream("b.json", [](std::ostream& o) { o << "{}\n"; });
        folder.commit();
    }
    EXPECT_EQ(slurp(out / "a.csv"), "1\n");
    EXPECT_EQ(slurp(out / "b.json"), "{}\n");
    EXPECT_EQ(entries(d.path()), 1u);
}

TEST(OutputFolder, ReplacesAPreviousRunButNeverOtherFiles) {
    TempDir d;
    const fs::path out = d.path() / "run";
    fs::create_directories(out);
    std::ofstream(out / "a.csv") << "old\n";
    {
        hwdb::OutputFolder folder(out, {"a.csv"});
        folder.write("a.csv", "new\n");
        folder.commit();
    }
    EXPECT_EQ(slurp(out / "a.csv"), "new\n");
    EXPECT_EQ(entries(d.path()), 1u);
    std::ofstream(out / "notes.txt") << "mine\n";
    const std::string e = error_of([&] { hwdb::OutputFolder folder(out, {"a.csv"}); });
    EXPECT_NE(
        e.find("holds 'notes.txt', which gpuplan did not write; choose a new or empty folder"),
        std::string::npos)
        << e;
    EXPECT_EQ(slurp(out / "notes.txt"), "mine\n");
    std::ofstream(d.path() / "file") << "x";
    const std::string f = error_of([&] { hwdb::OutputFolder folder(d.path() / "file", {}); });
    EXPECT_NE(f.find("exists and is not a folder"), std::string::npos) << f;
}

// The duplicate-key check kept a list of seen keys and scanned it per key: 300,000 keys took
// 41 s. A mapping as large as a file may be (16 MiB, here > 400,000 keys sharing a prefix,
// which makes each comparison of the old scan slower still) must load in linear time and find
// a duplicate at its end. The ctest TIMEOUT on this executable catches a return to O(n^2)
// without a timing assertion. (Long keys keep yaml-cpp's node tree, not the check, small.)
TEST(DuplicateKeys, AMappingAtTheSizeLimitIsCheckedInLinearTime) {
    std::string text = "schema: 1\nextra:\n";
    int n = 0;
    const std::size_t budget = hwdb::kMaxInputBytes - 128;
    char line[96];
    for (;; ++n) {
        const int len = std::snprintf(line, sizeof line, "  key_with_a_shared_prefix_%07d: 1\n", n);
        if (text.size() + static_cast<std::size_t>(len) > budget) {
            break;
        }
        text.append(line, static_cast<std::size_t>(len));
    }
    const int lines_before = 2 + n;
    text += "  key_with_a_shared_prefix_0000007: 2\n"; // a duplicate, last
    ASSERT_LE(text.size(), hwdb::kMaxInputBytes);
    ASSERT_GT(n, 400000);
    hwdb::Database db;
    try {
        db.add_yaml(text, "big.yaml");
        ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.line(), lines_before + 1);
        EXPECT_EQ(e.key_path(), "extra.key_with_a_shared_prefix_0000007");
        EXPECT_NE(std::string(e.what()).find("duplicate key"), std::string::npos) << e.what();
    }
}

// Every reader goes through read_text_file: a trace, a profile and a hwdb folder entry of
// /dev/zero stop at their limit instead of reading gigabytes.
TEST(ReadTextFile, EveryLoaderIsBounded) {
    const std::string trace =
        error_of([] { (void)hwdb::load_trace("/dev/zero", hwdb::TraceFormat::Auto); });
    EXPECT_NE(
        trace.find("/dev/zero: the trace is larger than 256 MiB; split it into smaller files"),
        std::string::npos)
        << trace;
    const std::string profile = error_of([] { (void)hwdb::load_profile("/dev/zero"); });
    EXPECT_NE(profile.find("/dev/zero: the profile is larger than 16 MiB"), std::string::npos)
        << profile;
    const std::string lengths = error_of([] { (void)hwdb::load_length_column("/dev/zero", "x"); });
    EXPECT_NE(lengths.find("larger than 256 MiB"), std::string::npos) << lengths;
}
