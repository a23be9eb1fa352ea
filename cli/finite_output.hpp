#pragma once
/// The last line of defence against non-finite results in text reports (issue 12): a stream
/// buffer that forwards whole lines and withholds the first line with a "nan" or "inf" word, and
/// everything after it, so the front end can report an internal error instead of a NaN.
/// Header-only so the CLI tests can check it without the binary.

#include <cctype>
#include <streambuf>
#include <string>
#include <string_view>

namespace gpuplan::cli {

/// Standard output passes through this filter a line at a time; main() turns a withheld line
/// into an internal error. Inputs that could produce one are refused where they enter; JSON
/// output has its own check (cli::json_text).
class FiniteLineFilter : public std::streambuf {
  public:
    /// Forwards checked lines to `dest`, which must outlive the filter.
    explicit FiniteLineFilter(std::streambuf* dest) : dest_(dest) {}
    /// Forwards the last, unterminated line; returns the withheld line, empty when none.
    std::string finish() {
        forward_line();
        return bad_line_;
    }
    /// True when `line` has "nan" or "inf" (any case) as a whole word, as streams and printf
    /// print non-finite doubles ("infinity-fabric" and "info" are words of their own).
    static bool has_non_finite(std::string_view line) {
        for (const std::string_view w : {"nan", "inf"}) {
            for (std::size_t i = 0; i + w.size() <= line.size(); ++i) {
                bool match = true;
                for (std::size_t k = 0; k < w.size() && match; ++k) {
                    match = std::tolower(static_cast<unsigned char>(line[i + k])) == w[k];
                }
                if (match && (i == 0 || !word_char(line[i - 1])) &&
                    (i + w.size() == line.size() || !word_char(line[i + w.size()]))) {
                    return true;
                }
            }
        }
        return false;
    }

  protected:
    int_type overflow(int_type c) override {
        if (c != traits_type::eof()) {
            line_.push_back(traits_type::to_char_type(c));
            if (c == '\n') {
                forward_line();
            }
        }
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        for (std::streamsize i = 0; i < n; ++i) {
            overflow(traits_type::to_int_type(s[i]));
        }
        return n;
    }
    int sync() override { return dest_->pubsync(); }

  private:
    static bool word_char(char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
    }
    void forward_line() {
        if (line_.empty() || !bad_line_.empty()) {
            line_.clear();
            return;
        }
        if (has_non_finite(line_)) {
            bad_line_ = line_;
        } else {
            dest_->sputn(line_.data(), static_cast<std::streamsize>(line_.size()));
        }
        line_.clear();
    }
    std::streambuf* dest_;
    std::string line_;
    std::string bad_line_;
};

} // namespace gpuplan::cli
