// Fuzzes the observed-metrics readers diagnose and calib read (issue 33): a vLLM /metrics scrape
// (alone and as the later of two), vllm bench / GuideLLM / AIPerf results, nvidia-smi CSV and
// dmon, DCGM, engine start-up logs and training logs. Each input goes to the reader its first
// byte picks. What must hold: a reader returns or throws gpuplan::Error, and what it returns is
// physically possible (non-negative latencies, fractions within 0..1, accepted <= drafted).
#include "hwdb/observed_readers.hpp"
#include "model/error.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace {

void check(bool ok) {
    if (!ok) {
        std::abort(); // an impossible figure passed the reader
    }
}

void check_non_negative(const std::optional<double>& v) {
    check(!v || (std::isfinite(*v) && *v >= 0));
}

void check_metrics(const gpuplan::model::EngineMetrics& m) {
    for (const auto& v : {m.ttft_mean_s, m.itl_mean_s, m.e2e_mean_s, m.queue_mean_s,
                          m.prefill_mean_s, m.decode_mean_s, m.running, m.waiting,
                          m.spec_accepted_tokens, m.spec_draft_tokens, m.prefix_hits}) {
        check_non_negative(v);
    }
    check(!m.kv_usage || (*m.kv_usage >= 0 && *m.kv_usage <= 1));
    check(!m.spec_accepted_tokens || !m.spec_draft_tokens ||
          *m.spec_accepted_tokens <= *m.spec_draft_tokens);
}

void check_bench(const gpuplan::model::BenchSummary& b) {
    // Latencies are at most a day (8.64e7 ms), the readers' stated range.
    for (const auto& v : {b.mean_ttft_ms, b.median_ttft_ms, b.p99_ttft_ms, b.mean_tpot_ms,
                          b.p99_tpot_ms, b.mean_itl_ms}) {
        check_non_negative(v);
        check(!v || *v <= 8.64e7);
    }
    check_non_negative(b.output_throughput);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    namespace h = gpuplan::hwdb;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        switch (data[0] % 8) {
        case 0: check_metrics(h::engine_metrics(h::parse_metrics_scrape(text, "f"), "f")); break;
        case 1: {
            // The text as both scrapes of a window: every counter's difference is zero.
            const auto s = h::parse_metrics_scrape(text, "f");
            check_metrics(h::engine_metrics(s, s, "f", 60.0));
            break;
        }
        case 2:
            for (const auto& b : h::parse_bench_results(text, "f")) {
                check_bench(b.bench);
            }
            break;
        case 3: check_bench(h::parse_aiperf(text, "f")); break;
        case 4: (void)h::parse_nvidia_smi_csv(text, "f"); break;
        case 5: (void)h::parse_dcgm_metrics(text, "f"); break;
        case 6: (void)h::parse_startup_log(text, "f"); break;
        default: (void)h::parse_training_log(text, "f"); break;
        }
    } catch (const gpuplan::Error&) {
    }
    return 0;
}
