#include "hwdb/detail/spec_readers.hpp"

#include "hwdb/database.hpp"

#include <limits>

namespace gpuplan::hwdb::detail {
namespace {

using model::Dimension;

constexpr long long kMaxCount = 1'000'000;
constexpr int kMaxDim = 1 << 24; // larger than any real hidden size, vocabulary or context

template <class Q> std::optional<Q> opt_q(MapReader& m, const std::string& key, Dimension dim) {
    return opt_typed<Q>(m, key, dim);
}

// An optional enum key in its one spelling (model::enum_names), else `fallback`.
template <class E> E read_enum(MapReader& m, const std::string& key, E fallback) {
    return opt_enum<E>(m, key).value_or(fallback);
}

} // namespace

std::string read_canonical_name(MapReader& m) {
    std::string name = m.string("name");
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
        if (!ok) {
            m.fail_at("name", "'" + name +
                                  "' is not a canonical name; use lowercase letters, digits, '.' "
                                  "and '-' (put other spellings under aliases)");
        }
    }
    return name;
}

std::vector<model::PriceEstimate> read_prices(MapReader& m) {
    std::vector<model::PriceEstimate> out;
    for (auto& p : m.map_list("prices")) {
        model::PriceEstimate e;
        e.price = p.price("price");
        e.date = p.string("date");
        e.source = p.string("source");
        e.note = p.string_or("note", "");
        p.finish();
        out.push_back(std::move(e));
    }
    return out;
}

model::AcceleratorSpec read_accelerator(MapReader& m) {
    model::AcceleratorSpec a;
    a.name = read_canonical_name(m);
    a.aliases = m.string_list("aliases");
    a.vendor = m.string("vendor");
    a.architecture = m.string("architecture");
    a.form_factor = m.string("form_factor");
    a.launch_year = m.integer("launch_year", 1990, 2100);
    a.memory = Bytes(m.quantity("memory", Dimension::Bytes));
    a.memory_type = m.string("memory_type");
    a.memory_bandwidth = BytesPerSecond(m.quantity("memory_bandwidth", Dimension::BytesPerSecond));
    {
        MapReader d = m.map("dense");
        auto& p = a.dense;
        p.fp64 = opt_q<FlopsPerSecond>(d, "fp64", Dimension::FlopsPerSecond);
        p.fp32 = opt_q<FlopsPerSecond>(d, "fp32", Dimension::FlopsPerSecond);
        p.tf32 = opt_q<FlopsPerSecond>(d, "tf32", Dimension::FlopsPerSecond);
        p.bf16 = opt_q<FlopsPerSecond>(d, "bf16", Dimension::FlopsPerSecond);
        p.fp16 = opt_q<FlopsPerSecond>(d, "fp16", Dimension::FlopsPerSecond);
        p.fp8 = opt_q<FlopsPerSecond>(d, "fp8", Dimension::FlopsPerSecond);
        p.int8 = opt_q<FlopsPerSecond>(d, "int8", Dimension::FlopsPerSecond);
        p.fp4 = opt_q<FlopsPerSecond>(d, "fp4", Dimension::FlopsPerSecond);
        if (!p.bf16 && !p.fp16) {
            d.fail_here("needs at least a bf16 or fp16 dense peak (e.g. 'bf16: 989.4 TFLOPS')");
        }
        d.finish();
    }
    a.l2_cache = opt_q<Bytes>(m, "l2_cache", Dimension::Bytes);
    a.compute_units = m.integer("compute_units", 1, kMaxCount);
    a.boost_clock = opt_q<Hertz>(m, "boost_clock", Dimension::Hertz);
    a.board_power = opt_q<Watts>(m, "board_power", Dimension::Watts);
    a.idle_power = opt_q<Watts>(m, "idle_power", Dimension::Watts);
    a.power_limit_min = opt_q<Watts>(m, "power_limit_min", Dimension::Watts);
    a.power_limit_max = opt_q<Watts>(m, "power_limit_max", Dimension::Watts);
    if (a.power_limit_min && a.power_limit_max && *a.power_limit_min > *a.power_limit_max) {
        m.fail_at("power_limit_min",
                  "power_limit_min is above power_limit_max; check both figures");
    }
    if (a.idle_power && a.board_power && *a.idle_power > *a.board_power) {
        m.fail_at("idle_power", "idle power is above board_power; check both figures");
    }
    a.scale_up_link = m.string_or("scale_up_link", "");
    a.scale_up_bandwidth =
        opt_q<BytesPerSecond>(m, "scale_up_bandwidth", Dimension::BytesPerSecond);
    a.host_link = m.string("host_link");
    a.prices = read_prices(m);
    a.sources = m.string("sources");
    a.notes = m.string_or("notes", "");
    // An announced, unshipped part: its notes carry the flag, so every front end that shows the
    // entry (hw show, compare, plan) can say so without a new member in the core's value type.
    const bool flagged = a.notes.starts_with(kPreliminaryNote);
    if (m.boolean_or("preliminary", false)) {
        if (!flagged) {
            a.notes = std::string(kPreliminaryNote) + " " + a.notes;
        }
    } else if (flagged) {
        m.fail_at("notes", "notes start with 'PRELIMINARY:' but the entry does not say "
                           "'preliminary: true'; add it or reword the notes");
    }
    m.finish();
    return a;
}

model::InterconnectSpec read_interconnect(MapReader& m) {
    using model::LinkKind;
    model::InterconnectSpec l;
    l.name = read_canonical_name(m);
    l.aliases = m.string_list("aliases");
    l.kind = read_enum(m, "kind", LinkKind::Other);
    if (!m.has("kind")) {
        m.fail_here("missing required key 'kind'");
    }
    l.bandwidth_per_direction =
        BytesPerSecond(m.quantity("bandwidth_per_direction", Dimension::BytesPerSecond));
    l.latency = Seconds(m.quantity("latency", Dimension::Seconds));
    l.sources = m.string("sources");
    l.notes = m.string_or("notes", "");
    m.finish();
    return l;
}

model::ServerSpec read_server(MapReader& m) {
    model::ServerSpec s;
    s.name = read_canonical_name(m);
    s.aliases = m.string_list("aliases");
    s.accelerator = m.string_or("accelerator", "");
    s.accelerators = m.integer("accelerators", 1, 1024);
    s.intra_node_link = m.string("intra_node_link");
    s.inter_node_link = m.string_or("inter_node_link", "");
    s.network_ports = m.opt_integer("network_ports", 0, 1024).value_or(0);
    s.max_power = Watts(m.quantity("max_power", Dimension::Watts));
    s.idle_power = opt_q<Watts>(m, "idle_power", Dimension::Watts);
    s.host_power = Watts(m.quantity("host_power", Dimension::Watts));
    s.host_memory = Bytes(m.quantity("host_memory", Dimension::Bytes));
    s.rack_units = m.integer("rack_units", 1, 60);
    s.prices = read_prices(m);
    s.sources = m.string("sources");
    s.notes = m.string_or("notes", "");
    m.finish();
    return s;
}

model::RackSpec read_rack(MapReader& m) {
    model::RackSpec r;
    r.name = read_canonical_name(m);
    r.aliases = m.string_list("aliases");
    r.server = m.string("server");
    r.servers = m.integer("servers", 1, 1024);
    r.power = Watts(m.quantity("power", Dimension::Watts));
    r.cooling = m.string("cooling");
    if (r.cooling != "air" && r.cooling != "liquid") {
        m.fail_at("cooling", "expected 'air' or 'liquid'");
    }
    r.prices = read_prices(m);
    r.sources = m.string("sources");
    r.notes = m.string_or("notes", "");
    m.finish();
    return r;
}

model::ModelSpec read_model(MapReader& m) {
    using namespace model;
    ModelSpec s;
    s.name = read_canonical_name(m);
    s.aliases = m.string_list("aliases");
    s.family = m.string("family");
    s.hf_id = m.string_or("hf_id", "");
    s.layers = m.integer("layers", 1, 10'000);
    s.hidden_size = m.integer("hidden_size", 1, kMaxDim);
    s.heads = m.integer("heads", 1, 100'000);
    s.kv_heads = m.integer("kv_heads", 1, 100'000);
    s.head_dim = m.integer("head_dim", 1, 100'000);
    s.ffn_size = m.integer("ffn_size", 0, kMaxDim); // 0: no dense layer (model::validate)
    s.mlp = read_enum(m, "mlp", MlpKind::Gated);
    s.vocab_size = m.integer("vocab_size", 1, kMaxDim);
    s.tied_embeddings = m.boolean_or("tied_embeddings", false);
    s.max_context = m.integer("max_context", 1, 1 << 28);
    s.attention = read_enum(m, "attention", AttentionKind::Gqa);
    if (!m.has("attention")) {
        m.fail_here("missing required key 'attention' (mha, gqa, mqa or mla)");
    }
    s.norm = read_enum(m, "norm", NormKind::RmsNorm);
    s.position = read_enum(m, "position", PositionKind::Rope);
    s.qkv_bias = m.boolean_or("qkv_bias", false);
    s.linear_bias = m.boolean_or("linear_bias", false);
    s.qk_norm = m.boolean_or("qk_norm", false);
    s.norms_per_layer = m.opt_integer("norms_per_layer", 0, 16).value_or(2);
    if (auto mla = m.opt_map("mla")) {
        MlaSpec x;
        x.q_lora_rank = mla->opt_integer("q_lora_rank", 0, kMaxDim).value_or(0);
        x.kv_lora_rank = mla->integer("kv_lora_rank", 1, kMaxDim);
        x.qk_nope_head_dim = mla->integer("qk_nope_head_dim", 1, kMaxDim);
        x.qk_rope_head_dim = mla->integer("qk_rope_head_dim", 0, kMaxDim);
        x.v_head_dim = mla->integer("v_head_dim", 1, kMaxDim);
        mla->finish();
        s.mla = x;
    }
    if (auto moe = m.opt_map("moe")) {
        MoeSpec x;
        x.experts = moe->integer("experts", 1, 100'000);
        x.active_experts = moe->integer("active_experts", 1, 100'000);
        x.shared_experts = moe->opt_integer("shared_experts", 0, 1000).value_or(0);
        x.expert_ffn_size = moe->integer("expert_ffn_size", 1, kMaxDim);
        x.first_dense_layers = moe->opt_integer("first_dense_layers", 0, 10'000).value_or(0);
        x.layer_interval = moe->opt_integer("layer_interval", 1, 10'000).value_or(1);
        moe->finish();
        s.moe = x;
    }
    if (auto sw = m.opt_map("sliding_window")) {
        SlidingWindowSpec x;
        x.window = sw->integer("window", 1, 1 << 28);
        x.windowed_layers = sw->integer("windowed_layers", 0, 10'000);
        x.chunked = sw->boolean_or("chunked", false);
        sw->finish();
        s.sliding_window = x;
    }
    if (auto st = m.opt_map("state")) {
        StateSpec x;
        x.kind = read_enum(*st, "kind", StateKind::GatedDeltaNet);
        if (!st->has("kind")) {
            st->fail_here("missing required key 'kind' (gated_delta_net or mamba2)");
        }
        x.state_layers = st->integer("state_layers", 1, 10'000);
        x.heads = st->integer("heads", 1, 100'000);
        x.groups = st->integer("groups", 1, 100'000);
        x.key_dim = st->integer("key_dim", 1, kMaxDim);
        x.value_dim = st->integer("value_dim", 1, kMaxDim);
        x.conv_kernel = st->opt_integer("conv_kernel", 1, 64).value_or(4);
        x.fp32_state = st->boolean_or("fp32_state", false);
        st->finish();
        s.state = x;
    }
    if (auto ix = m.opt_map("indexer")) {
        IndexerSpec x;
        x.heads = ix->integer("heads", 1, 100'000);
        x.head_dim = ix->integer("head_dim", 1, kMaxDim);
        x.top_k = ix->integer("top_k", 1, 1 << 28);
        ix->finish();
        s.indexer = x;
    }
    s.attention_sinks = m.boolean_or("attention_sinks", false);
    s.output_gate = m.boolean_or("output_gate", false);
    s.published_params = m.number("published_params", 1e3, 1e15);
    s.published_active_params = m.opt_number("published_active_params", 0, 1e15).value_or(0);
    s.source = m.string("source");
    if (const auto weights = m.opt_string("weights")) {
        // The checkpoint's own format (docs/hwdb-schema.md, models.weights).
        try {
            s.weights = parse_precision(*weights);
        } catch (const InputError& e) {
            m.fail_at("weights", e.what());
        }
    }
    if (const auto kv = m.opt_string("kv_cache")) {
        // The KV-cache format the checkpoint was calibrated for (docs/hwdb-schema.md).
        try {
            s.kv_cache = parse_precision(*kv);
        } catch (const InputError& e) {
            m.fail_at("kv_cache", e.what());
        }
    }
    if (auto cps = m.opt_map("checkpoints")) {
        // Published checkpoints by format (docs/hwdb-schema.md, models.checkpoints): the Hub ids
        // --emit launches. The keys are model::checkpoint_format's names; others are errors.
        for (const char* format : {"bf16", "fp8", "awq", "gptq-int4", "gptq-int8", "nvfp4", "mxfp4",
                                   "int8", "int4", "gguf"}) {
            if (auto id = cps->opt_string(format)) {
                s.checkpoints.push_back({format, *id});
            }
        }
        cps->finish();
    }
    try {
        validate(s, "model '" + s.name + "'");
    } catch (const InvalidArgument& e) {
        m.fail_here(e.what());
    }
    m.finish();
    return s;
}

} // namespace gpuplan::hwdb::detail
