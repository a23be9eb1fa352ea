#pragma once
/// The one exception hierarchy of gpuplan. InputError: the user can fix it (exit code 2).
/// InternalError: a bug (exit code 1). Library code throws; only front ends catch.

#include <stdexcept>
#include <string>

namespace gpuplan {

/// Base of every gpuplan exception.
class Error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Anything the user can fix: a bad file, flag or value.
class InputError : public Error {
  public:
    using Error::Error;
};

/// A configuration file problem, located by file, line, column (1-based) and key path.
class ConfigError : public InputError {
  public:
    ConfigError(std::string file, int line, int column, std::string key_path,
                const std::string& message)
        : InputError(format(file, line, column, key_path, message)), file_(std::move(file)),
          line_(line), column_(column), key_path_(std::move(key_path)) {}
    [[nodiscard]] const std::string& file() const { return file_; }
    [[nodiscard]] int line() const { return line_; }
    [[nodiscard]] int column() const { return column_; }
    [[nodiscard]] const std::string& key_path() const { return key_path_; }

  private:
    static std::string format(const std::string& file, int line, int column,
                              const std::string& key_path, const std::string& message) {
        std::string out = file;
        if (line > 0) {
            out.append(1, ':').append(std::to_string(line));
            out.append(1, ':').append(std::to_string(column));
        }
        out.append(": ");
        if (!key_path.empty()) {
            out.append(key_path).append(": ");
        }
        return out.append(message);
    }
    std::string file_;
    int line_;
    int column_;
    std::string key_path_;
};

/// A bad command line.
class UsageError : public InputError {
  public:
    using InputError::InputError;
};

/// A bad value that reached the core (e.g. a negative GPU count built in code).
class InvalidArgument : public InputError {
  public:
    using InputError::InputError;
};

/// A broken invariant: a bug in gpuplan.
class InternalError : public Error {
  public:
    using Error::Error;
};

} // namespace gpuplan

/// Throws InternalError when a cheap invariant does not hold.
#define GPUPLAN_CHECK(cond, msg)                                                                   \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            throw ::gpuplan::InternalError(std::string("check failed: ") + (msg));                 \
        }                                                                                          \
    } while (false)
