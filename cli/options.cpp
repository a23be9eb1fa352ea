#include "cli/options.hpp"

#include <ostream>

namespace gpuplan::cli {

bool parse_options(const std::string& command, const std::vector<std::string>& args,
                   const po::options_description& desc, const po::positional_options_description& pos,
                   po::variables_map& vm, std::ostream& out, const std::string& usage) {
    po::options_description all(desc);
    all.add_options()("help,h", "show this help");
    try {
        po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
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

}  // namespace gpuplan::cli
