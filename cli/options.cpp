#include "cli/options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <ostream>

namespace gpuplan::cli {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

template <class T> bool is_typed(const po::value_semantic* s) {
    return dynamic_cast<const po::typed_value<T>*>(s) != nullptr;
}

// The one check on numeric flag values before Boost converts them: boost::lexical_cast reads
// "nan" and "inf" as doubles and wraps "-1" to 2^64-1 for unsigned types, so those are refused
// here, for every command, with the flag's name.
void check_numbers(const po::options_description& desc, const po::parsed_options& parsed,
                   const std::string& command) {
    for (const auto& opt : parsed.options) {
        const po::option_description* d = desc.find_nothrow(opt.string_key, false);
        if (d == nullptr) {
            continue;
        }
        const po::value_semantic* sem = d->semantic().get();
        const bool real = is_typed<double>(sem) || is_typed<float>(sem);
        const bool unsigned_int = is_typed<std::uint64_t>(sem) || is_typed<unsigned>(sem) ||
                                  is_typed<std::uint32_t>(sem) || is_typed<std::size_t>(sem);
        for (const auto& v : opt.value) {
            const std::string l = lower(v);
            if (real &&
                (l.find("nan") != std::string::npos || l.find("inf") != std::string::npos)) {
                throw UsageError("gpuplan " + command + ": --" + opt.string_key + " '" + v +
                                 "' is not a finite number; give a value such as 1.5");
            }
            if (unsigned_int && l.find('-') != std::string::npos) {
                throw UsageError("gpuplan " + command + ": --" + opt.string_key + " '" + v +
                                 "' is negative; give a whole number >= 0");
            }
        }
    }
}

} // namespace

bool parse_options(const std::string& command, const std::vector<std::string>& args,
                   const po::options_description& desc,
                   const po::positional_options_description& pos, po::variables_map& vm,
                   std::ostream& out, const std::string& usage) {
    po::options_description all(desc);
    all.add_options()("help,h", "show this help");
    try {
        const po::parsed_options parsed =
            po::command_line_parser(args).options(all).positional(pos).run();
        check_numbers(all, parsed, command);
        po::store(parsed, vm);
        if (vm.count("help")) {
            out << "usage: gpuplan " << command << " " << usage << "\n\n" << all << '\n';
            return false;
        }
        po::notify(vm);
    } catch (const po::error& e) {
        throw UsageError("gpuplan " + command + ": " + e.what() + "; see 'gpuplan " + command +
                         " --help'");
    }
    return true;
}

} // namespace gpuplan::cli
