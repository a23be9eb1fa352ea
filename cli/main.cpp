// gpuplan command-line front end: dispatches subcommands and is the one place that catches
// exceptions and turns them into exit codes (0 ok, 2 bad input or an output that cannot be
// written, 1 internal error, 130/143 stopped by SIGINT/SIGTERM).
#include "cli/cli_context.hpp"
#include "cli/finite_output.hpp"
#include "cli/interrupt.hpp"
#include "model/error.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

void print_usage(std::ostream& out) {
    out << "gpuplan " GPUPLAN_VERSION " - capacity planner for LLMs on GPUs\n\n"
           "usage: gpuplan [--hwdb DIR]... COMMAND [options]\n\ncommands:\n";
    for (const auto& s : gpuplan::cli::subcommands()) {
        out << "  " << s.words << std::string(18 - std::strlen(s.words), ' ') << s.summary << '\n';
    }
    out << "\nglobal options:\n"
           "  --hwdb DIR        add a folder of hwdb YAML (overrides built-in entries by name);\n"
           "                    GPUPLAN_HWDB may hold a colon-separated list too\n"
           "  --version         print the version\n"
           "  --help            this help; 'gpuplan COMMAND --help' for a command's options\n\n"
           "exit codes: 0 success, 2 bad input (or an output that cannot be written), 1 internal\n"
           "error, 130 stopped by SIGINT (Ctrl-C), 143 stopped by SIGTERM\n";
}

// The subcommands of a group word ("hw" -> "hw list", "hw show"), one per line with its summary;
// "" when `word` is not a group.
std::string group_usage(const std::string& word) {
    std::string out;
    for (const auto& s : gpuplan::cli::subcommands()) {
        const std::string_view w = s.words;
        if (w.size() > word.size() && w.starts_with(word) && w[word.size()] == ' ') {
            out +=
                "  gpuplan " + std::string(w) + std::string(18 - w.size(), ' ') + s.summary + '\n';
        }
    }
    return out;
}

std::string first_of_group(const std::string& word) {
    for (const auto& s : gpuplan::cli::subcommands()) {
        if (std::string_view(s.words).starts_with(word + " ")) {
            return s.words;
        }
    }
    return word;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = up;
        }
    }
    return row[b.size()];
}

// "; did you mean 'estimate'?" for a typo within a third of the word's letters (at least 2
// edits), compared with whole commands and with their first words; "" when nothing is close.
std::string did_you_mean(const std::string& typed) {
    std::string best;
    std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
    const auto consider = [&](std::string_view candidate) {
        const std::size_t d = edit_distance(typed, candidate);
        if (d < best_distance) {
            best_distance = d;
            best = candidate;
        }
    };
    for (const auto& s : gpuplan::cli::subcommands()) {
        const std::string_view w = s.words;
        consider(w);
        consider(w.substr(0, w.find(' ')));
    }
    return best.empty() ? std::string() : "; did you mean '" + best + "'?";
}

int dispatch(int argc, char** argv) {
    gpuplan::cli::CliContext ctx;
    ctx.out = &std::cout;
    ctx.err = &std::cerr;
    std::vector<std::string> words;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--version") {
            std::cout << "gpuplan " GPUPLAN_VERSION "\n";
            return 0;
        }
        if (a == "--help" || a == "-h") {
            if (words.empty()) {
                print_usage(std::cout);
                return 0;
            }
            break;
        }
        if (a == "--hwdb") {
            if (i + 1 >= argc) {
                throw gpuplan::UsageError(
                    "--hwdb needs a folder; e.g. 'gpuplan --hwdb ./my-hwdb hw list'");
            }
            ctx.extra_hwdb.emplace_back(argv[++i]);
            continue;
        }
        if (a.starts_with("--hwdb=")) {
            ctx.extra_hwdb.emplace_back(std::string(a.substr(7)));
            continue;
        }
        if (a.starts_with("-") || words.size() == 2) {
            break;
        }
        words.emplace_back(a);
        // Stop after a complete subcommand so its positional arguments stay arguments.
        const std::string joined = words.size() == 2 ? words[0] + " " + words[1] : words[0];
        if (gpuplan::cli::find_subcommand(joined) != nullptr) {
            ++i;
            break;
        }
    }
    if (words.empty()) {
        print_usage(std::cerr);
        return 2;
    }
    const std::string joined = words.size() == 2 ? words[0] + " " + words[1] : words[0];
    if (const auto* s = gpuplan::cli::find_subcommand(joined)) {
        ctx.args.assign(argv + i, argv + argc);
        return s->run(ctx);
    }
    // `gpuplan hw` alone (or `gpuplan hw --help`): the group's subcommands, not "unknown".
    const bool wants_help =
        i < argc && (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h");
    if (const std::string group = group_usage(words[0]); !group.empty()) {
        if (words.size() == 1 && wants_help) {
            std::cout << group;
            return 0;
        }
        if (words.size() == 1) {
            throw gpuplan::UsageError("'gpuplan " + words[0] + "' needs a subcommand:\n" + group +
                                      "e.g. 'gpuplan " + first_of_group(words[0]) + "'");
        }
    }
    // A word that starts no command is the typo ("estimte"); what follows it is an argument.
    const std::string unknown = group_usage(words[0]).empty() ? words[0] : joined;
    throw gpuplan::UsageError("unknown command '" + unknown + "'" + did_you_mean(unknown) +
                              "; run 'gpuplan --help' for the list");
}

// 128 + the signal number, the shell's code for a process a signal ended.
int interrupted(int sig, const char* what) {
    std::fflush(stdout);
    std::cerr << "\ngpuplan: stopped by " << (sig == SIGTERM ? "SIGTERM" : "SIGINT") << what
              << '\n';
    return 128 + sig;
}

int standard_output_failed(int err) {
    std::cerr << "error: standard output: cannot write the output ("
              << (err != 0 ? std::strerror(err) : "write error")
              << "); check the disk space or where the output is redirected\n";
    return 2;
}

// Output to a full disk fails in the stream's buffer, silently; the last buffer is written only
// here, so check it, so that `gpuplan hw list --json > /dev/full` does not exit 0.
bool standard_output_ok() {
    errno = 0;
    const bool flush_failed = std::fflush(stdout) != 0;
    const int err = errno;
    if (!flush_failed && !std::ferror(stdout)) {
        return true;
    }
    standard_output_failed(err);
    return false;
}

} // namespace

int main(int argc, char** argv) {
    gpuplan::cli::install_interrupt_handlers();
    gpuplan::cli::mark_non_finite_numbers();
    gpuplan::cli::FiniteLineFilter filter(std::cout.rdbuf());
    std::streambuf* const original = std::cout.rdbuf(&filter);
    // Restores std::cout (also when an exception leaves dispatch) and reports a withheld line.
    const auto finish = [&]() -> std::string {
        std::string bad = gpuplan::cli::FiniteLineFilter::without_marks(filter.finish());
        std::cout.rdbuf(original);
        while (!bad.empty() && (bad.back() == '\n' || bad.back() == '\r')) {
            bad.pop_back();
        }
        return bad;
    };
    // A failed write to standard output throws at once (caught below), while errno still says why.
    std::cout.exceptions(std::ios::badbit);
    int code = 0;
    try {
        code = dispatch(argc, argv);
    } catch (const std::ios_base::failure&) {
        const int err = errno;
        std::cout.exceptions(std::ios::goodbit);
        (void)finish();
        return standard_output_failed(err);
    } catch (const gpuplan::cli::Interrupted& e) {
        (void)finish();
        return interrupted(e.signal(), "; no output was written");
    } catch (const gpuplan::InputError& e) {
        (void)finish();
        // A message may quote a non-finite value the user gave ('nan' is not a token count):
        // the formatters' marks are for standard output's check, not for the reader.
        std::cerr << "error: " << gpuplan::cli::FiniteLineFilter::without_marks(e.what()) << '\n';
        return 2;
    } catch (const std::exception& e) {
        (void)finish();
        std::cerr << "internal error: " << gpuplan::cli::FiniteLineFilter::without_marks(e.what())
                  << '\n';
        return 1;
    }
    if (const std::string bad = finish(); !bad.empty()) {
        std::cerr << "internal error: a result is not a finite number, output stopped at '" << bad
                  << "'; please report this with the input\n";
        return 1;
    }
    if (const int sig = gpuplan::cli::interrupt_signal()) {
        return interrupted(sig, "");
    }
    if (!standard_output_ok()) {
        return 2;
    }
    return code;
}
