// The serving features' figures in simulate --out's Chrome/Perfetto trace (cli/chrome_trace.hpp,
// sim/feature_trace.hpp): speculative decoding's accepted drafts per step, disaggregation's KV
// transfer spans and link counters, and the prefix cache's hit rate per replica. The trace is
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

} // namespace
