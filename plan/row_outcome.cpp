#include "plan/row_outcome.hpp"

#include "model/error.hpp"

#include <charconv>
#include <cstdint>

namespace gpuplan::plan {
namespace {

// Fields separated by '\n'; a string is its length, a space, then its bytes (so it may hold
// anything); a double is the shortest text that reads back as the same value.
void put(std::string& out, double v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
    out += '\n';
}

void put(std::string& out, long long v) {
    out += std::to_string(v);
    out += '\n';
}

void put(std::string& out, const std::string& s) {
    out += std::to_string(s.size());
    out += ' ';
    out += s;
    out += '\n';
}

class Reader {
  public:
    explicit Reader(const std::string& s) : s_(s) {}

    template <class T> T number() {
        T v{};
        const auto nl = s_.find('\n', at_);
        const auto r = std::from_chars(s_.data() + at_, s_.data() + nl, v);
        if (nl == std::string::npos || r.ec != std::errc() || r.ptr != s_.data() + nl) {
            throw InternalError("a sizing outcome does not decode at byte " + std::to_string(at_));
        }
        at_ = nl + 1;
        return v;
    }

    std::string text() {
        const auto space = s_.find(' ', at_);
        std::size_t n = 0;
        const auto r = std::from_chars(s_.data() + at_, s_.data() + space, n);
        if (space == std::string::npos || r.ec != std::errc() || space + 1 + n >= s_.size()) {
            throw InternalError("a sizing outcome does not decode at byte " + std::to_string(at_));
        }
        std::string out = s_.substr(space + 1, n);
        at_ = space + 1 + n + 1;
        return out;
    }

  private:
    const std::string& s_;
    std::size_t at_ = 0;
};

} // namespace

std::string encode_outcome(const SizingRow& row) {
    std::string out;
    put(out, static_cast<long long>(row.stage));
    put(out, row.reason);
    put(out, row.miss_ratio);
    put(out, static_cast<long long>(row.margins.size()));
    for (const SloMargin& m : row.margins) {
        put(out, m.request_class);
        put(out, m.metric);
        put(out, m.value_s);
        put(out, m.target_s);
    }
    put(out, static_cast<long long>(row.failed));
    put(out, static_cast<long long>(row.meets_slo ? 1 : 0));
    put(out, row.binding_slo);
    put(out, row.sim_throughput_tok_s);
    put(out, row.sim_mean_running);
    put(out, row.sim_avg_power_w);
    put(out, row.sim_peak_power_w);
    put(out, row.sim_energy_j_per_token);
    return out;
}

void decode_outcome(const std::string& bytes, SizingRow& row) {
    Reader in(bytes);
    row.stage = static_cast<SizingStage>(in.number<long long>());
    row.reason = in.text();
    row.miss_ratio = in.number<double>();
    const auto margins = in.number<long long>();
    row.margins.clear();
    for (long long k = 0; k < margins; ++k) {
        SloMargin m;
        m.request_class = in.text();
        m.metric = in.text();
        m.value_s = in.number<double>();
        m.target_s = in.number<double>();
        row.margins.push_back(std::move(m));
    }
    row.failed = in.number<decltype(row.failed)>();
    row.meets_slo = in.number<long long>() != 0;
    row.binding_slo = in.text();
    row.sim_throughput_tok_s = in.number<double>();
    row.sim_mean_running = in.number<double>();
    row.sim_avg_power_w = in.number<double>();
    row.sim_peak_power_w = in.number<double>();
    row.sim_energy_j_per_token = in.number<double>();
}

} // namespace gpuplan::plan
