#pragma once
/// A progress bar on standard error, drawn only when standard error is a terminal (so logs,
/// pipes and batch jobs get no control characters). `simulate` and `sweep` share it.

#include <cstdio>
#include <string>
#include <unistd.h>

namespace gpuplan::cli {

class ProgressBar {
  public:
    ProgressBar(std::string label, bool enabled)
        : label_(std::move(label)), enabled_(enabled && isatty(fileno(stderr)) != 0) {}
    ~ProgressBar() { clear(); }
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    /// Shows fraction `f` (0..1) done, with `detail` after the percentage (e.g. "12/24 points").
    void operator()(double f, const std::string& detail = {}) {
        if (!enabled_) {
            return;
        }
        const int pct = static_cast<int>(f * 100);
        if (pct == shown_ && detail == detail_) {
            return;
        }
        shown_ = pct;
        detail_ = detail;
        const int bar = pct * 40 / 100;
        std::fprintf(stderr, "\r%s [%.*s%*s] %3d %%%s%s", label_.c_str(), bar,
                     "########################################", 40 - bar, "", pct,
                     detail.empty() ? "" : " ", detail.c_str());
        std::fflush(stderr);
    }

    /// Erases the bar (before printing anything else on standard error).
    void clear() {
        if (enabled_ && shown_ >= 0) {
            std::fprintf(stderr, "\r%90s\r", "");
            std::fflush(stderr);
            shown_ = -1;
        }
    }

  private:
    std::string label_;
    bool enabled_;
    int shown_ = -1;
    std::string detail_;
};

} // namespace gpuplan::cli
