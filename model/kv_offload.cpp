#include "model/kv_offload.hpp"
#include "model/checked_format.hpp"

#include "model/error.hpp"
#include "model/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuplan::model {

void validate(const KvOffloadConfig& c) {
    const auto check_bytes = [](const std::optional<Bytes>& v, const char* key) {
        if (v && !(v->si() >= 0.0 && std::isfinite(v->si()))) {
            throw InvalidArgument(
                gpuplan::checked_format("engine.kv_offload.{}: {} bytes is negative or not "
                                        "finite; give a size such as 256 GiB, or 0 for no "
                                        "such tier",
                                        key, v->si()));
        }
    };
    const auto check_rate = [](const std::optional<BytesPerSecond>& v, const char* key) {
        if (v && !(v->si() > 0.0 && std::isfinite(v->si()))) {
            throw InvalidArgument(
                gpuplan::checked_format("engine.kv_offload.{}: {} B/s is not a positive "
                                        "bandwidth; give one such as 25 GB/s",
                                        key, v->si()));
        }
    };
    check_bytes(c.host, "host");
    check_bytes(c.nvme, "nvme");
    check_rate(c.host_bandwidth, "host_bandwidth");
    check_rate(c.nvme_bandwidth, "nvme_bandwidth");
    if (c.host && c.host->si() == 0.0 && (!c.nvme || c.nvme->si() == 0.0)) {
        throw InvalidArgument("engine.kv_offload.host: both tiers are 0 bytes; give host or nvme "
                              "a size, or remove engine.kv_offload");
    }
}

KvTiers resolve_kv_offload(const KvOffloadConfig& c, Bytes gpu_kv_pool,
                           std::optional<BytesPerSecond> host_link) {
    validate(c);
    KvTiers t;
    t.host.capacity = c.host.value_or(Bytes(kDefaultHostRatio * std::max(0.0, gpu_kv_pool.si())));
    t.host.bandwidth =
        c.host_bandwidth.value_or(host_link.value_or(BytesPerSecond(kDefaultHostBandwidth)));
    t.nvme.capacity = c.nvme.value_or(Bytes(0));
    t.nvme.bandwidth = c.nvme_bandwidth.value_or(BytesPerSecond(kDefaultNvmeBandwidth));
    return t;
}

Seconds kv_load_time(Bytes bytes, BytesPerSecond bandwidth) {
    GPUPLAN_CHECK(bandwidth.si() > 0, "KV tier bandwidth must be positive");
    return bytes / bandwidth;
}

TierHitSplit lru_tier_hits(double working_set, double gpu, double host, double nvme) {
    TierHitSplit s;
    if (!(working_set > 0)) {
        return s;
    }
    const double w = working_set;
    const double g = std::min(std::max(0.0, gpu), w);
    const double gh = std::min(std::max(0.0, gpu) + std::max(0.0, host), w);
    const double ghn = std::min(std::max(0.0, gpu) + std::max(0.0, host) + std::max(0.0, nvme), w);
    s.gpu = g / w;
    s.host = (gh - g) / w;
    s.nvme = (ghn - gh) / w;
    s.miss = (w - ghn) / w;
    return s;
}

double kv_working_set_tokens(const Workload& w) {
    double total = 0;
    for (const RequestClass& c : w.classes) {
        if (c.share > 0 && c.route != RouteTarget::Cloud && !c.agent) {
            total += static_cast<double>(c.prefix_groups) * c.shared_prefix;
        }
    }
    return total;
}

} // namespace gpuplan::model
