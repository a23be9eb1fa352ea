#pragma once
/// The last line of defence against non-finite results in text reports (issue 12): a stream
/// buffer that forwards whole lines and withholds the first line that holds a non-finite number,
/// and everything after it, so the front end can report an internal error instead of a NaN.
/// Numbers are recognised by value, not by text (issue 33): every formatter of a number marks a
/// NaN or an infinity with gpuplan::kNonFiniteMark (model/checked_format.hpp; iostreams through
/// NonFiniteMarkingNumPut below), and the filter looks for that mark, so a name such as
/// "inf-test", "NaN budget" or a file nan.yaml passes. Header-only so the CLI tests can check it
/// without the binary.

#include "model/checked_format.hpp"

#include <cmath>
#include <iostream>
#include <locale>
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
    /// True when `line` holds a number a formatter marked as non-finite (kNonFiniteMark, or
    /// its JSON-escaped form inside a JSON string).
    static bool has_non_finite(std::string_view line) {
        return line.find(kNonFiniteMark) != std::string_view::npos ||
               line.find(kNonFiniteMarkJson) != std::string_view::npos;
    }
    /// `line` without the marks, for the error message.
    static std::string without_marks(std::string line) {
        for (const std::string_view m : {kNonFiniteMark, kNonFiniteMarkJson}) {
            for (auto at = line.find(m); at != std::string::npos; at = line.find(m, at)) {
                line.erase(at, m.size());
            }
        }
        return line;
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

/// The iostreams' number formatter with kNonFiniteMark in front of a NaN or an infinity, so
/// numbers a report writes with `<<` are checked by value like those of checked_format.
class NonFiniteMarkingNumPut : public std::num_put<char> {
  protected:
    iter_type do_put(iter_type out, std::ios_base& str, char fill, double v) const override {
        return std::num_put<char>::do_put(mark(out, std::isfinite(v)), str, fill, v);
    }
    iter_type do_put(iter_type out, std::ios_base& str, char fill, long double v) const override {
        return std::num_put<char>::do_put(mark(out, std::isfinite(v)), str, fill, v);
    }

  private:
    static iter_type mark(iter_type out, bool finite) {
        if (!finite) {
            for (const char c : kNonFiniteMark) {
                *out++ = c;
            }
        }
        return out;
    }
};

/// Makes every stream the process creates from now on, and std::cout, mark non-finite numbers.
/// The locale is the classic one plus the facet, so nothing else about the output changes.
inline void mark_non_finite_numbers() {
    const std::locale marking(std::locale::classic(), new NonFiniteMarkingNumPut);
    std::locale::global(marking);
    std::cout.imbue(marking);
}

} // namespace gpuplan::cli
