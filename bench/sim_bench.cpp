// Speed of the serving simulator (issue 4 target: 1,000,000 requests of a chat mix on 16
// replicas, continuous batching with chunked prefill and prefix caching, in under 10 s on one
// core and under 1 GB without per-request output; issue 12: 10,000,000 requests in under 20 s
// and 1 GB). Reports simulated requests/s, events/s, wall and CPU time per run and the process's
// peak resident memory (getrusage; run one case per process, with --benchmark_filter, for a peak
// that belongs to it). The scenario is built in code.
//
// The 10^7 and 10^8 cases run on demand only:
//   GPUPLAN_BENCH_LARGE=1 build/bench/gpuplan_bench --benchmark_filter=10MRequests
#include "model/scenario.hpp"
#include "sim/simulate.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include <sys/resource.h>

namespace {

using namespace gpuplan;

model::Scenario chat_mix(int replicas) {
    model::Scenario s;
    model::ModelSpec& m = s.deployment.model;
    m.name = "llama-3.1-8b";
    m.family = "llama";
    m.layers = 32;
    m.hidden_size = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.ffn_size = 14336;
    m.vocab_size = 128256;
    m.max_context = 131072;
    m.attention = model::AttentionKind::Gqa;
    model::AcceleratorSpec& g = s.deployment.gpu;
    g.name = "h100-sxm";
    g.vendor = "nvidia";
    g.memory = Bytes(80.0 * kGiB);
    g.memory_bandwidth = BytesPerSecond(3.35e12);
    g.dense.bf16 = FlopsPerSecond(989.4e12);
    g.dense.fp8 = FlopsPerSecond(1978.9e12);
    s.deployment.intra_node_link.name = "nvlink4";
    s.deployment.intra_node_link.bandwidth_per_direction = BytesPerSecond(450e9);
    s.deployment.par.dp = replicas;
    s.deployment.engine.max_model_len = 8192;
    model::RequestClass chat;
    chat.name = "chat";
    chat.share = 0.7;
    chat.shared_prefix = 300;
    chat.input.kind = model::LengthKind::LogNormal;
    chat.input.mean = 600;
    chat.input.stddev = 400;
    chat.input.max = 6000;
    chat.output.kind = model::LengthKind::LogNormal;
    chat.output.mean = 200;
    chat.output.stddev = 150;
    chat.output.max = 1500;
    chat.ttft = Seconds(1.0);
    chat.tpot = Seconds(0.05);
    model::RequestClass rag = chat;
    rag.name = "rag";
    rag.share = 0.3;
    rag.shared_prefix = 1500;
    rag.prefix_groups = 8;
    rag.input = model::LengthDistribution::fixed(200);
    s.workload.classes = {chat, rag};
    // About 75 % of the 16 replicas' capacity for this mix.
    s.workload.requests_per_s = 24.0 * replicas;
    s.seed = 1;
    return s;
}

double peak_rss_mib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024.0; // Linux reports KiB
}

// CPU seconds (user + system) the process has used: on a shared machine wall time measures the
// neighbours too, CPU time mostly this run.
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const auto s = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    return s(u.ru_utime) + s(u.ru_stime);
}

void run(benchmark::State& state, int requests) {
    const model::Scenario s = chat_mix(16);
    sim::SimOptions o;
    o.requests = requests;
    std::int64_t done = 0;
    double wall_s = 0;
    double cpu_s = 0;
    std::uint64_t events = 0;
    double simulated_s = 0;
    double p99_ttft = 0;
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = cpu_seconds();
        const sim::SimResult r = sim::simulate(s, o);
        cpu_s = cpu_seconds() - c0;
        wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        done += r.overall.completed;
        events += r.events;
        simulated_s = r.duration.si();
        p99_ttft = r.overall.ttft.p99.si();
        benchmark::DoNotOptimize(r);
    }
    state.SetItemsProcessed(done);
    state.counters["requests_per_s"] =
        benchmark::Counter(static_cast<double>(done), benchmark::Counter::kIsRate);
    state.counters["events_per_s"] =
        benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
    state.counters["peak_rss_MiB"] = peak_rss_mib();
    state.counters["wall_s"] = wall_s; // the last run
    state.counters["cpu_s"] = cpu_s;   // the last run, user + system
    state.counters["bytes_per_request"] = peak_rss_mib() * 1048576.0 / requests;
    state.counters["simulated_s"] = simulated_s;
    state.counters["ttft_p99_s"] = p99_ttft;
}

void BM_Simulate100kRequests16Replicas(benchmark::State& state) {
    run(state, 100000);
}
BENCHMARK(BM_Simulate100kRequests16Replicas)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_Simulate1MRequests16Replicas(benchmark::State& state) {
    run(state, 1000000);
}
BENCHMARK(BM_Simulate1MRequests16Replicas)->Unit(benchmark::kMillisecond)->Iterations(1);

// On demand (minutes and gigabytes before issue 12): GPUPLAN_BENCH_LARGE=1.
bool large_enabled(benchmark::State& state) {
    const char* e = std::getenv("GPUPLAN_BENCH_LARGE");
    if (e == nullptr || std::string(e) != "1") {
        state.SkipWithError("set GPUPLAN_BENCH_LARGE=1 to run this case");
        return false;
    }
    return true;
}

void BM_Simulate10MRequests16Replicas(benchmark::State& state) {
    if (large_enabled(state)) {
        run(state, 10000000);
    }
}
BENCHMARK(BM_Simulate10MRequests16Replicas)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Simulate100MRequests16Replicas(benchmark::State& state) {
    if (large_enabled(state)) {
        run(state, 100000000);
    }
}
BENCHMARK(BM_Simulate100MRequests16Replicas)->Unit(benchmark::kMillisecond)->Iterations(1);

} // namespace
