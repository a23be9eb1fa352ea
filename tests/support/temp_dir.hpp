#pragma once
/// A fresh folder per test process under the system's temporary folder, removed afterwards.

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace gpuplan::test {

struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& name)
        : path(std::filesystem::temp_directory_path() /
               ("gpuplan-test-" + name + "-" + std::to_string(::getpid()))) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    /// Writes `text` to `file` inside the folder.
    void write(const std::string& file, const std::string& text) const {
        std::ofstream(path / file, std::ios::binary) << text;
    }
};

} // namespace gpuplan::test
