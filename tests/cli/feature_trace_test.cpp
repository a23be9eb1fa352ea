// The serving features' figures in simulate --out's Chrome/Perfetto trace (cli/chrome_trace.hpp,
// sim/feature_trace.hpp): speculative decoding's accepted drafts per step, disaggregation's KV
// transfer spans and link counters, the prefix cache's hit rate per replica, the KV offload
// tiers' hit shares and load spans, and the LoRA adapters' loads. The trace is
// parsed as JSON; each figure is checked against a hand computation or the run's own summary.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

namespace {

using nlohmann::json;

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

// Runs `simulate ARGS --out DIR --json` and returns the summary and the parsed trace.
struct Traced {
    json summary;
    json trace;
};

Traced traced(const std::string& args, const std::string& tag) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("gpuplan-feature-trace-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const auto r = gpuplan::test::run_cli("simulate " + args + " --json --out " + dir.string());
    EXPECT_EQ(r.exit_code, 0) << r.out;
    Traced t;
    t.summary = json::parse(r.out.substr(r.out.find('{')));
    std::ifstream in(dir / "trace.json");
    t.trace = json::parse(in);
    std::filesystem::remove_all(dir);
    return t;
}

bool starts_with(const std::string& s, const std::string& p) {
    return s.rfind(p, 0) == 0;
}

TEST(FeatureTrace, SpeculativeStepsCountTheirAcceptedDrafts) {
    const Traced t =
        traced(src("examples/speculative-llama70b-h100.yaml") + " --requests 20", "spec");
    const json& sp = t.summary.at("speculative");
    const int k = sp.at("num_speculative_tokens").get<int>();
    std::int64_t accepted = 0;
    int counters = 0;
    for (const json& e : t.trace.at("traceEvents")) {
        if (e.value("ph", "") != "C" || !starts_with(e.value("name", ""), "speculative replica ")) {
            continue;
        }
        ++counters;
        const json& a = e.at("args");
        accepted += a.at("accepted").get<std::int64_t>();
        // A verified sequence advances by 1 to k + 1 tokens.
        EXPECT_GE(a.at("tokens_per_seq").get<double>(), 1.0);
        EXPECT_LE(a.at("tokens_per_seq").get<double>(), k + 1.0);
    }
    EXPECT_GT(counters, 0);
    // Every accepted draft of the run is in exactly one step's counter.
    EXPECT_EQ(accepted, sp.at("accepted").get<std::int64_t>());
    // Without speculation there is no such counter.
    const Traced off = traced(src("examples/speculative-llama70b-h100.yaml") +
                                  " --requests 5 --set engine.speculative=null --set plan=null",
                              "spec-off");
    for (const json& e : off.trace.at("traceEvents")) {
        EXPECT_FALSE(starts_with(e.value("name", ""), "speculative replica"));
    }
}

TEST(FeatureTrace, KvTransfersAreSpansInsideTheirRequestsWithLinkCounters) {
    const Traced t =
        traced(src("examples/disaggregated-llama70b-h100.yaml") + " --requests 20", "disagg");
    // By hand: Llama-3.1-70B's KV is 2 × 80 layers × 8 KV heads × 128 × 2 bytes = 327,680 bytes
    // per token; a 3,000-token prompt over 4 GPU pairs of NDR (50 GB/s each, 5 µs).
    const double bytes = 2.0 * 80 * 8 * 128 * 2 * 3000;
    const double transfer_s = 5e-6 + bytes / (4 * 50e9);
    std::map<std::uint64_t, double> begin, end;
    std::map<std::string, int> busy; // link name → last busy value
    int link_events = 0;
    for (const json& e : t.trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        if (name == "kv_transfer") {
            const auto id = e.at("id").get<std::uint64_t>();
            if (e.at("ph") == "b") {
                begin[id] = e.at("ts").get<double>();
                EXPECT_NEAR(e.at("args").at("bytes").get<double>(), bytes, 1.0);
                EXPECT_NEAR(e.at("args").at("transfer_ms").get<double>(), transfer_s * 1e3, 1e-6);
            } else {
                end[id] = e.at("ts").get<double>();
            }
        } else if (starts_with(name, "link replica ") && e.at("ph") == "C") {
            ++link_events;
            const int b = e.at("args").at("busy").get<int>();
            // The link alternates: busy while it carries one KV, then free.
            if (busy.count(name) != 0) {
                EXPECT_NE(b, busy[name]) << name;
            }
            busy[name] = b;
            const double u = e.at("args").at("utilisation").get<double>();
            EXPECT_GE(u, 0.0);
            EXPECT_LE(u, 1.0);
        }
    }
    const auto transfers = t.summary.at("disaggregation").at("transfers").get<std::size_t>();
    EXPECT_EQ(begin.size(), transfers);
    EXPECT_EQ(end.size(), transfers);
    EXPECT_EQ(link_events, static_cast<int>(2 * transfers));
    for (const auto& [id, b] : begin) {
        // Layer by layer, at least one layer's share is left after the prefill.
        EXPECT_GE(end.at(id) - b, transfer_s / 80 * 1e6 - 1e-3) << id;
    }
    // Co-located: no transfer.
    const Traced co = traced(src("examples/disaggregated-llama70b-h100.yaml") +
                                 " --requests 5 --set cluster.disaggregation=null",
                             "colocated");
    for (const json& e : co.trace.at("traceEvents")) {
        EXPECT_NE(e.value("name", ""), "kv_transfer");
    }
}

TEST(FeatureTrace, PrefixCacheHitRatePerReplicaEndsAtTheRoutingFigure) {
    const Traced t = traced(src("examples/prefix-routing-rag.yaml") + " --requests 200", "prefix");
    std::map<int, double> last;
    for (const json& e : t.trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        if (e.value("ph", "") == "C" && starts_with(name, "prefix cache replica ")) {
            const double h = e.at("args").at("hit_rate").get<double>();
            EXPECT_GE(h, 0.0);
            EXPECT_LT(h, 1.0);
            last[std::stoi(name.substr(std::string("prefix cache replica ").size()))] = h;
        }
    }
    const json& reps = t.summary.at("routing").at("replicas");
    ASSERT_EQ(last.size(), reps.size());
    for (std::size_t i = 0; i < reps.size(); ++i) {
        EXPECT_NEAR(last.at(static_cast<int>(i)), reps[i].at("prefix_hit_rate").get<double>(),
                    1e-12)
            << i;
    }
}

// The replica number at the end of a counter's name ("kv tiers replica 3" -> 3).
int replica_of(const std::string& name) {
    return std::stoi(name.substr(name.rfind(' ') + 1));
}

// Checks a run's KV tier events against its summary; `tier` ("host" or "nvme") must have hits.
void check_kv_tiers(const Traced& t, const std::string& tier) {
    const json& k = t.summary.at("kv_offload");
    const std::int64_t loaded = k.at("loaded_blocks").at("host").get<std::int64_t>() +
                                k.at("loaded_blocks").at("nvme").get<std::int64_t>();
    const double load_s =
        k.at("load_time_s").at("host").get<double>() + k.at("load_time_s").at("nvme").get<double>();
    const double bytes = k.at("loaded_bytes").at("host").get<double>() +
                         k.at("loaded_bytes").at("nvme").get<double>();
    // The run exercises the host tier (the example's point): its figures are not all zero.
    ASSERT_GT(k.at("hit_tokens").at(tier).get<std::int64_t>(), 0);
    ASSERT_GT(loaded, 0);
    std::map<int, json> last;
    std::int64_t counted_blocks = 0;
    double counted_ms = 0;
    std::map<std::uint64_t, double> open; // request -> its kv_load's expected end (µs)
    double span_s = 0;
    double span_bytes = 0;
    std::int64_t span_blocks = 0;
    int spans = 0;
    for (const json& e : t.trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        const std::string ph = e.value("ph", "");
        if (ph == "C" && starts_with(name, "kv tiers replica ")) {
            const json& a = e.at("args");
            const double shares = a.at("gpu_hit_share").get<double>() +
                                  a.at("host_hit_share").get<double>() +
                                  a.at("nvme_hit_share").get<double>();
            EXPECT_GE(shares, 0.0);
            EXPECT_LE(shares, 1.0 + 1e-12);
            counted_blocks += a.at("loaded_blocks").get<std::int64_t>();
            counted_ms += a.at("load_ms").get<double>();
            last[replica_of(name)] = a;
        } else if (name == "kv_load" && ph == "b") {
            const json& a = e.at("args");
            const auto id = e.at("id").get<std::uint64_t>();
            EXPECT_EQ(open.count(id), 0U) << id;
            open[id] = e.at("ts").get<double>() + a.at("load_ms").get<double>() * 1e3;
            span_s += a.at("load_ms").get<double>() / 1e3;
            span_bytes += a.at("bytes").get<double>();
            span_blocks +=
                a.at("host_blocks").get<std::int64_t>() + a.at("nvme_blocks").get<std::int64_t>();
            ++spans;
            // Its bytes are its blocks' (per GPU; the summary's loaded bytes per block).
            EXPECT_NEAR(a.at("bytes").get<double>(),
                        static_cast<double>(a.at("host_blocks").get<std::int64_t>() +
                                            a.at("nvme_blocks").get<std::int64_t>()) *
                            k.at("block_bytes").get<double>(),
                        1e-6);
        } else if (name == "kv_load" && ph == "e") {
            const auto id = e.at("id").get<std::uint64_t>();
            ASSERT_EQ(open.count(id), 1U) << id;
            EXPECT_NEAR(e.at("ts").get<double>(), open.at(id), 1e-6 * open.at(id)) << id;
            open.erase(id);
        }
    }
    EXPECT_TRUE(open.empty());
    // One replica: its last counter is the run's hit share per tier.
    ASSERT_EQ(last.size(), 1U);
    const json& a = last.begin()->second;
    EXPECT_NEAR(a.at("gpu_hit_share").get<double>(), k.at("hit_rate").at("gpu").get<double>(),
                1e-12);
    EXPECT_NEAR(a.at("host_hit_share").get<double>(), k.at("hit_rate").at("host").get<double>(),
                1e-12);
    EXPECT_NEAR(a.at("nvme_hit_share").get<double>(), k.at("hit_rate").at("nvme").get<double>(),
                1e-12);
    // Every load is in exactly one step's counter and one request's span.
    EXPECT_EQ(counted_blocks, loaded);
    EXPECT_EQ(span_blocks, loaded);
    EXPECT_NEAR(counted_ms / 1e3, load_s, 1e-9 * load_s);
    EXPECT_NEAR(span_s, load_s, 1e-9 * load_s);
    EXPECT_NEAR(span_bytes, bytes, 1e-9 * bytes);
    // One span per admission that loaded.
    EXPECT_EQ(spans, k.at("loading_requests").get<int>());
}

TEST(FeatureTrace, KvTierCountersEndAtTheSummaryAndLoadSpansSumToItsLoadTime) {
    check_kv_tiers(
        traced(src("examples/kv-offload-rag-llama8b.yaml") + " --requests 200", "kv-tiers"),
        "host");
    // A small host tier over NVMe: both tiers serve hits and load blocks.
    const Traced nvme = traced(src("examples/kv-offload-rag-llama8b.yaml") +
                                   " --requests 200 --set engine.kv_offload.host='2 GiB'"
                                   " --set engine.kv_offload.nvme='64 GiB'",
                               "kv-tiers-nvme");
    check_kv_tiers(nvme, "host");
    check_kv_tiers(nvme, "nvme");
    // Without offload tiers there is no such event.
    const Traced off = traced(src("examples/kv-offload-rag-llama8b.yaml") +
                                  " --requests 20 --set engine.kv_offload=null",
                              "kv-tiers-off");
    for (const json& e : off.trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        EXPECT_FALSE(starts_with(name, "kv tiers replica") || name == "kv_load") << name;
    }
}

TEST(FeatureTrace, LoraCountersEndAtTheSummaryAndLoadSpansSumToItsLoadTime) {
    const Traced t = traced(src("examples/lora-llama8b-h100.yaml") + " --requests 300", "lora");
    const json& l = t.summary.at("lora");
    const int max_loras = l.at("max_loras").get<int>();
    const int adapters = l.at("adapters").get<int>();
    const double host_s = l.at("load_time_each_s").get<double>();
    const double disk_s = l.at("disk_time_each_s").get<double>();
    ASSERT_GT(l.at("loads").get<std::int64_t>(), 0);
    std::map<int, json> last;
    std::int64_t spans = 0;
    std::int64_t disk_spans = 0;
    double span_s = 0;
    std::map<std::uint64_t, double> open; // span id -> its expected end (µs)
    for (const json& e : t.trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        const std::string ph = e.value("ph", "");
        if (ph == "C" && starts_with(name, "lora replica ")) {
            const json& a = e.at("args");
            EXPECT_GE(a.at("resident").get<int>(), 1);
            EXPECT_LE(a.at("resident").get<int>(), max_loras);
            last[replica_of(name)] = a;
        } else if (name == "lora_load" && ph == "b") {
            const json& a = e.at("args");
            const int adapter = a.at("adapter").get<int>();
            EXPECT_GE(adapter, 0);
            EXPECT_LT(adapter, adapters);
            const bool disk = a.at("from").get<std::string>() == "disk";
            // A load is one host → GPU copy, after one disk read when the host cache missed.
            const double each = host_s + (disk ? disk_s : 0.0);
            EXPECT_NEAR(a.at("load_ms").get<double>() / 1e3, each, 1e-12) << adapter;
            disk_spans += disk ? 1 : 0;
            span_s += a.at("load_ms").get<double>() / 1e3;
            ++spans;
            open[e.at("id").get<std::uint64_t>()] = e.at("ts").get<double>() + each * 1e6;
        } else if (name == "lora_load" && ph == "e") {
            const auto id = e.at("id").get<std::uint64_t>();
            ASSERT_EQ(open.count(id), 1U) << id;
            EXPECT_NEAR(e.at("ts").get<double>(), open.at(id), 1e-6 * open.at(id)) << id;
            open.erase(id);
        }
    }
    EXPECT_TRUE(open.empty());
    // The replicas' last counters sum to the run's loads, disk reads and load time.
    std::int64_t loads = 0;
    std::int64_t disk_loads = 0;
    double load_ms = 0;
    for (const auto& [rep, a] : last) {
        loads += a.at("loads").get<std::int64_t>();
        disk_loads += a.at("disk_loads").get<std::int64_t>();
        load_ms += a.at("load_ms").get<double>();
    }
    const double load_s = l.at("load_time_s").get<double>();
    EXPECT_EQ(loads, l.at("loads").get<std::int64_t>());
    EXPECT_EQ(disk_loads, l.at("disk_loads").get<std::int64_t>());
    EXPECT_NEAR(load_ms / 1e3, load_s, 1e-9 * load_s);
    // Every load is one span.
    EXPECT_EQ(spans, loads);
    EXPECT_EQ(disk_spans, disk_loads);
    EXPECT_NEAR(span_s, load_s, 1e-9 * load_s);
    // Σ span time by hand: loads × one copy + disk reads × one read.
    EXPECT_NEAR(span_s,
                static_cast<double>(loads) * host_s + static_cast<double>(disk_loads) * disk_s,
                1e-9 * load_s);

    // --trace-limit bounds the spans and counters like the other features' events.
    const Traced cut = traced(
        src("examples/lora-llama8b-h100.yaml") + " --requests 100 --trace-limit 3", "lora-cut");
    int cut_spans = 0;
    int cut_counters = 0;
    for (const json& e : cut.trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        cut_spans += name == "lora_load" && e.value("ph", "") == "b" ? 1 : 0;
        cut_counters += starts_with(name, "lora replica ") ? 1 : 0;
    }
    EXPECT_EQ(cut_spans, 3);
    EXPECT_EQ(cut_counters, 3);

    // Without LoRA there is no such event.
    const Traced off =
        traced(src("examples/lora-llama8b-h100.yaml") +
                   " --requests 20 --set engine.lora=null --set cluster.router=least_outstanding",
               "lora-off");
    for (const json& e : off.trace.at("traceEvents")) {
        const std::string name = e.value("name", "");
        EXPECT_FALSE(starts_with(name, "lora replica") || name == "lora_load") << name;
    }
}

} // namespace
