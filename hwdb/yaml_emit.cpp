#include "hwdb/detail/yaml_emit.hpp"

#include "model/error.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace gpuplan::hwdb::detail {

std::string yaml_quoted(const std::string& s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (ch == '\n') {
            out += "\\n";
        } else if (ch == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out + "\"";
}

std::string yaml_number(double v) {
    GPUPLAN_CHECK(std::isfinite(v), "yaml_number: a number to write is not finite");
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    GPUPLAN_CHECK(r.ec == std::errc(), "yaml_number: to_chars failed");
    return std::string(buf, r.ptr);
}

} // namespace gpuplan::hwdb::detail
