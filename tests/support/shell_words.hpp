#pragma once
/// Splits a POSIX sh command line back into its words (XCU 2.2 quoting, 2.3 token recognition),
/// for tests of the commands gpuplan prints. It refuses what a shell would expand or treat
/// specially outside quotes ($, `, *, ?, [, ~ at a word's start, #, (, ), {, }, !), so a value
/// that reached a command unquoted fails the test instead of being read back unchanged.

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::test {

/// A word, or an operator (&&, ||, ;, |, &, >, <) outside quotes.
struct ShellToken {
    std::string text;
    bool op = false;
    friend bool operator==(const ShellToken&, const ShellToken&) = default;
};

inline std::vector<ShellToken> shell_split(std::string_view s) {
    std::vector<ShellToken> out;
    std::string word;
    bool in_word = false;
    const auto end_word = [&] {
        if (in_word) {
            out.push_back({word, false});
        }
        word.clear();
        in_word = false;
    };
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n') {
            end_word();
        } else if (c == '\'') {
            const std::size_t close = s.find('\'', i + 1);
            if (close == std::string_view::npos) {
                throw std::runtime_error("unterminated single quote");
            }
            word.append(s.substr(i + 1, close - i - 1));
            in_word = true;
            i = close;
        } else if (c == '"') {
            in_word = true;
            for (++i; i < s.size() && s[i] != '"'; ++i) {
                if (s[i] == '$' || s[i] == '`') {
                    throw std::runtime_error("expansion inside double quotes");
                }
                if (s[i] == '\\' && i + 1 < s.size() &&
                    std::string_view("$`\"\\\n").find(s[i + 1]) != std::string_view::npos) {
                    ++i;
                }
                word += s[i];
            }
            if (i >= s.size()) {
                throw std::runtime_error("unterminated double quote");
            }
        } else if (c == '\\') {
            if (i + 1 >= s.size()) {
                throw std::runtime_error("trailing backslash");
            }
            word += s[++i];
            in_word = true;
        } else if (std::string_view("&|;<>").find(c) != std::string_view::npos) {
            end_word();
            std::string op(1, c);
            if (i + 1 < s.size() && (s[i + 1] == c || (c == '>' && s[i + 1] == '>'))) {
                op += s[++i];
            }
            out.push_back({op, true});
        } else if (std::string_view("$`*?[#(){}!").find(c) != std::string_view::npos ||
                   (c == '~' && !in_word)) {
            throw std::runtime_error(std::string("unquoted '") + c + "' in: " + std::string(s));
        } else {
            word += c;
            in_word = true;
        }
    }
    end_word();
    return out;
}

/// The words of the last simple command of `s` (after its last && or ;), operators excluded.
inline std::vector<std::string> last_command_words(std::string_view s) {
    std::vector<std::string> words;
    for (const auto& t : shell_split(s)) {
        if (t.op && (t.text == "&&" || t.text == ";")) {
            words.clear();
        } else if (!t.op) {
            words.push_back(t.text);
        }
    }
    return words;
}

} // namespace gpuplan::test
