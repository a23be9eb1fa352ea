#pragma once
/// Boost.Program_Options helpers shared by the subcommands: parsing with usage errors that say
/// how to get help, and the options every command has (--help, --json).

#include "model/error.hpp"

#include <boost/program_options.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace gpuplan::cli {

namespace po = boost::program_options;

/// Parses `args` against `desc` (and positional `pos`); turns Boost errors into UsageError
/// naming the command. Returns false when --help was given (help is then printed to `out`).
bool parse_options(const std::string& command, const std::vector<std::string>& args,
                   const po::options_description& desc,
                   const po::positional_options_description& pos, po::variables_map& vm,
                   std::ostream& out, const std::string& usage);

} // namespace gpuplan::cli
