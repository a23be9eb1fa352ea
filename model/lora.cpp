#include "model/lora.hpp"

#include "model/detail/shapes.hpp"
#include "model/error.hpp"
#include "model/slo_capacity.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::model {
namespace {

// One module's A and B widths on one tensor-parallel rank: vLLM's column-parallel LoRA layers
// (q/k/v/gate/up) keep A whole and shard B's output rows; the row-parallel ones (o/down) shard
// A's input columns and keep B whole (vllm/lora/layers/column_parallel_linear.py,
// row_parallel_linear.py @a78dc92f, without fully_sharded_loras).
LoraModuleDims rank_dims(const detail::Shapes& s, LoraModule m) {
    switch (m) {
    case LoraModule::QProj: return {s.h, s.q_width_rank};
    case LoraModule::KProj:
    case LoraModule::VProj: return {s.h, s.kv_width_rank / 2.0}; // K and V together there
    case LoraModule::OProj: return {s.o_in_rank, s.h};
    case LoraModule::GateProj:
    case LoraModule::UpProj: return {s.h, s.ffn_rank};
    case LoraModule::DownProj: return {s.ffn_rank, s.h};
    }
    return {};
}

} // namespace

const char* to_string(LoraModule module) {
    return name_of(module);
}

const char* to_string(LoraPopularity popularity) {
    return name_of(popularity);
}

void validate(const LoraServingConfig& c) {
    const auto fail = [](const std::string& what) { throw InvalidArgument("engine.lora." + what); };
    if (c.adapters < 1) {
        fail("adapters: " + std::to_string(c.adapters) + " is below 1; serve at least one adapter");
    }
    if (c.rank < 1) {
        fail("rank: " + std::to_string(c.rank) + " is below 1; give the adapters' rank r");
    }
    if (c.max_loras < 1) {
        fail("max_loras: " + std::to_string(c.max_loras) +
             " is below 1; vLLM needs at least one GPU adapter slot");
    }
    const int mr = max_lora_rank(c);
    constexpr std::array<int, 9> kRanks{1, 8, 16, 32, 64, 128, 256, 320, 512};
    if (std::find(kRanks.begin(), kRanks.end(), mr) == kRanks.end()) {
        fail("max_lora_rank: " + std::to_string(mr) +
             " is not a rank vLLM accepts; use one of 1, 8, 16, 32, 64, 128, 256, 320, 512");
    }
    if (c.rank > mr) {
        fail("rank: " + std::to_string(c.rank) + " is above max_lora_rank " + std::to_string(mr) +
             " (vLLM refuses to load such an adapter); raise engine.lora.max_lora_rank");
    }
    if (max_cpu_loras(c) < c.max_loras) {
        fail("max_cpu_loras: " + std::to_string(max_cpu_loras(c)) + " is below max_loras " +
             std::to_string(c.max_loras) + " (vLLM refuses it); raise it or leave it unset");
    }
    if (c.target_modules.empty()) {
        fail("target_modules: the list is empty; name the adapted layers, e.g. [q_proj, v_proj]");
    }
    for (std::size_t i = 0; i < c.target_modules.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (c.target_modules[i] == c.target_modules[j]) {
                fail(std::string("target_modules: '") + to_string(c.target_modules[i]) +
                     "' is listed twice; name each module once");
            }
        }
    }
    if (!(c.zipf_s > 0.0) || !std::isfinite(c.zipf_s)) {
        fail("zipf_s: " + std::to_string(c.zipf_s) +
             " is not above 0; give the Zipf exponent s, e.g. 1.0");
    }
    if (c.load_bandwidth && !(c.load_bandwidth->si() > 0)) {
        fail("load_bandwidth: not above 0; give the host-to-GPU rate, e.g. 25 GB/s");
    }
    if (c.disk_bandwidth && !(c.disk_bandwidth->si() > 0)) {
        fail("disk_bandwidth: not above 0; give the disk read rate, e.g. 2 GB/s");
    }
}

void check_lora_model(const ModelSpec& m, const LoraServingConfig& c) {
    if (m.mla) {
        throw InvalidArgument("engine.lora: model '" + m.name +
                              "' uses MLA attention, whose projections are not the q/k/v/o "
                              "target modules modelled here; remove engine.lora");
    }
    for (const LoraModule t : c.target_modules) {
        if (lora_module_is_mlp(t) && lora_module_layers(m, t) == 0) {
            throw InvalidArgument(std::string("engine.lora.target_modules: '") + to_string(t) +
                                  "' is in no layer of model '" + m.name +
                                  "' (no dense MLP, or no gate in a plain MLP; MoE experts "
                                  "are not adapted); target the attention modules");
        }
    }
}

bool lora_module_is_mlp(LoraModule module) {
    return module == LoraModule::GateProj || module == LoraModule::UpProj ||
           module == LoraModule::DownProj;
}

LoraModuleDims lora_module_dims(const ModelSpec& m, LoraModule module) {
    const double h = m.hidden_size;
    const double q = static_cast<double>(m.heads) * m.head_dim;
    const double kv = static_cast<double>(m.kv_heads) * m.head_dim;
    switch (module) {
    case LoraModule::QProj: return {h, q};
    case LoraModule::KProj:
    case LoraModule::VProj: return {h, kv};
    case LoraModule::OProj: return {q, h};
    case LoraModule::GateProj:
    case LoraModule::UpProj: return {h, static_cast<double>(m.ffn_size)};
    case LoraModule::DownProj: return {static_cast<double>(m.ffn_size), h};
    }
    return {};
}

int lora_module_layers(const ModelSpec& m, LoraModule module) {
    if (!lora_module_is_mlp(module)) {
        return m.layers;
    }
    if (module == LoraModule::GateProj && m.mlp == MlpKind::Plain) {
        return 0; // a plain MLP has no gate
    }
    return detail::make_shapes(m, Parallelism{}).dense_layers;
}

Bytes lora_adapter_bytes(const ModelSpec& m, const LoraServingConfig& c, int rank,
                         double element_bytes) {
    double elements = 0;
    for (const LoraModule t : c.target_modules) {
        const LoraModuleDims dims = lora_module_dims(m, t);
        elements += static_cast<double>(lora_module_layers(m, t)) * rank * (dims.in + dims.out);
    }
    return Bytes(elements * element_bytes);
}

LoraModuleDims lora_rank_dims(const Deployment& d, LoraModule module) {
    return rank_dims(detail::make_shapes(d.model, d.par), module);
}

Bytes lora_gpu_bytes(const Deployment& d, int rank) {
    if (!d.engine.lora) {
        return Bytes(0);
    }
    const LoraServingConfig& c = *d.engine.lora;
    double attn = 0;
    double mlp = 0;
    for (const LoraModule t : c.target_modules) {
        const LoraModuleDims w = lora_rank_dims(d, t);
        (lora_module_is_mlp(t) ? mlp : attn) += w.in + w.out;
    }
    double worst = 0;
    for (int i = 0; i < std::max(1, d.par.pp); ++i) {
        const detail::Stage st = detail::pipeline_stage(d.model, d.par.pp, i);
        const double dense = st.layers - st.moe_layers;
        worst = std::max(worst, st.layers * attn + dense * mlp);
    }
    return Bytes(worst * rank * d.prec.activations.bytes_per_element());
}

Bytes lora_reserved_bytes(const Deployment& d) {
    if (!d.engine.lora) {
        return Bytes(0);
    }
    return lora_gpu_bytes(d, max_lora_rank(*d.engine.lora)) * d.engine.lora->max_loras;
}

std::vector<double> lora_popularity(const LoraServingConfig& c) {
    const auto n = static_cast<std::size_t>(std::max(1, c.adapters));
    std::vector<double> p(n, 1.0 / static_cast<double>(n));
    if (c.popularity == LoraPopularity::Zipf) {
        double sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            p[i] = std::pow(static_cast<double>(i + 1), -c.zipf_s);
            sum += p[i];
        }
        for (double& v : p) {
            v /= sum;
        }
    }
    return p;
}

double lru_hit_rate(std::span<const double> p, double capacity) {
    if (capacity <= 0 || p.empty()) {
        return 0.0;
    }
    if (capacity >= static_cast<double>(p.size())) {
        return 1.0;
    }
    const auto occupied = [&](double t) {
        double sum = 0;
        for (const double q : p) {
            sum += -std::expm1(-q * t);
        }
        return sum;
    };
    // occupied(T) rises from 0 to N: bracket T, then bisect.
    double lo = 0;
    double hi = 1;
    while (occupied(hi) < capacity && hi < 1e300) {
        lo = hi;
        hi *= 2;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (occupied(mid) < capacity ? lo : hi) = mid;
    }
    const double t = 0.5 * (lo + hi);
    double hit = 0;
    for (const double q : p) {
        hit += q * -std::expm1(-q * t);
    }
    return std::clamp(hit, 0.0, 1.0);
}

BytesPerSecond lora_load_bandwidth(const LoraServingConfig& c) {
    return c.load_bandwidth.value_or(BytesPerSecond(kDefaultLoraLoadBandwidth));
}

BytesPerSecond lora_disk_bandwidth(const LoraServingConfig& c) {
    return c.disk_bandwidth.value_or(BytesPerSecond(kDefaultLoraDiskBandwidth));
}

LoraFigures lora_figures(const Deployment& d, double requests_per_s) {
    if (!d.engine.lora) {
        throw InvalidArgument("lora_figures: the deployment has no engine.lora block; add one");
    }
    const LoraServingConfig& c = *d.engine.lora;
    LoraFigures f;
    f.adapters = c.adapters;
    f.rank = c.rank;
    f.max_loras = c.max_loras;
    f.max_lora_rank = max_lora_rank(c);
    f.max_cpu_loras = max_cpu_loras(c);
    f.adapter_bytes =
        lora_adapter_bytes(d.model, c, c.rank, d.prec.activations.bytes_per_element());
    f.adapter_gpu_bytes = lora_gpu_bytes(d, c.rank);
    f.reserved_per_gpu = lora_reserved_bytes(d);
    const std::vector<double> p = lora_popularity(c);
    f.gpu_hit_rate = lru_hit_rate(p, c.max_loras);
    f.cpu_hit_rate = lru_hit_rate(p, max_cpu_loras(c));
    f.load_time = f.adapter_gpu_bytes / lora_load_bandwidth(c);
    f.disk_time = f.adapter_bytes / lora_disk_bandwidth(c);
    const double rate = std::max(0.0, requests_per_s);
    f.loads_per_s = rate * (1.0 - f.gpu_hit_rate);
    f.disk_loads_per_s = rate * (1.0 - f.cpu_hit_rate);
    f.mean_load_delay = f.load_time * (1.0 - f.gpu_hit_rate) + f.disk_time * (1.0 - f.cpu_hit_rate);
    return f;
}

int lora_running_limit(const LoraServingConfig& c, double percentile, int cap) {
    if (c.max_loras >= c.adapters) {
        return cap; // every adapter has a slot: nothing waits for one
    }
    const std::vector<double> p = lora_popularity(c);
    const double z = normal_quantile(std::clamp(percentile / 100.0, 0.5, 0.9999));
    const auto within = [&](int r) {
        double mean = 0, var = 0;
        for (const double pi : p) {
            const double q = -std::expm1(r * std::log1p(-std::min(pi, 1.0 - 1e-15)));
            mean += q;
            var += q * (1.0 - q);
        }
        return mean + z * std::sqrt(var) <= c.max_loras;
    };
    int lo = std::min(std::max(1, c.max_loras), cap);
    if (lo >= cap || !within(lo + 1)) {
        return lo;
    }
    int hi = cap; // the largest r within, by bisection over [lo, cap]
    if (within(hi)) {
        return hi;
    }
    while (hi - lo > 1) {
        const int mid = lo + (hi - lo) / 2;
        (within(mid) ? lo : hi) = mid;
    }
    return lo;
}

Seconds lora_load_delay_at(const LoraFigures& f, double percentile) {
    const double tail = 1.0 - percentile / 100.0;
    if (1.0 - f.cpu_hit_rate > tail) {
        return f.load_time + f.disk_time;
    }
    if (1.0 - f.gpu_hit_rate > tail) {
        return f.load_time;
    }
    return Seconds(0);
}

} // namespace gpuplan::model
