#include "hwdb/model_yaml_writer.hpp"

#include "hwdb/detail/yaml_emit.hpp"
#include "model/error.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace gpuplan::hwdb {

namespace {

std::string quoted(const std::string& s) {
    return detail::yaml_quoted(s);
}
std::string number(double v) {
    return detail::yaml_number(v);
}

} // namespace

std::string model_to_yaml(const model::ModelSpec& m) {
    const model::ModelSpec defaults;
    std::string y = "schema: 1\nmodels:\n";
    const auto line = [&y](const char* key, const std::string& value) {
        y += std::string("    ") + key + ": " + value + "\n";
    };
    const auto integer = [&line](const char* key, int v) { line(key, std::to_string(v)); };
    const auto sub = [&y](const char* key, int v) {
        y += std::string("      ") + key + ": " + std::to_string(v) + "\n";
    };

    y += "  - name: " + quoted(m.name) + "\n";
    if (!m.aliases.empty()) {
        std::string list = "[";
        for (std::size_t i = 0; i < m.aliases.size(); ++i) {
            list += (i > 0 ? ", " : "") + quoted(m.aliases[i]);
        }
        line("aliases", list + "]");
    }
    line("family", quoted(m.family));
    if (!m.hf_id.empty()) {
        line("hf_id", quoted(m.hf_id));
    }
    integer("layers", m.layers);
    integer("hidden_size", m.hidden_size);
    integer("heads", m.heads);
    integer("kv_heads", m.kv_heads);
    integer("head_dim", m.head_dim);
    integer("ffn_size", m.ffn_size);
    if (m.mlp != defaults.mlp) {
        line("mlp", model::name_of(m.mlp));
    }
    integer("vocab_size", m.vocab_size);
    if (m.tied_embeddings != defaults.tied_embeddings) {
        line("tied_embeddings", m.tied_embeddings ? "true" : "false");
    }
    integer("max_context", m.max_context);
    line("attention", model::name_of(m.attention));
    if (m.norm != defaults.norm) {
        line("norm", model::name_of(m.norm));
    }
    if (m.position != defaults.position) {
        line("position", model::name_of(m.position));
    }
    if (m.qkv_bias) {
        line("qkv_bias", "true");
    }
    if (m.linear_bias) {
        line("linear_bias", "true");
    }
    if (m.qk_norm) {
        line("qk_norm", "true");
    }
    if (m.norms_per_layer != defaults.norms_per_layer) {
        integer("norms_per_layer", m.norms_per_layer);
    }
    if (m.mla) {
        y += "    mla:\n";
        sub("q_lora_rank", m.mla->q_lora_rank);
        sub("kv_lora_rank", m.mla->kv_lora_rank);
        sub("qk_nope_head_dim", m.mla->qk_nope_head_dim);
        sub("qk_rope_head_dim", m.mla->qk_rope_head_dim);
        sub("v_head_dim", m.mla->v_head_dim);
    }
    if (m.moe) {
        y += "    moe:\n";
        sub("experts", m.moe->experts);
        sub("active_experts", m.moe->active_experts);
        sub("shared_experts", m.moe->shared_experts);
        sub("expert_ffn_size", m.moe->expert_ffn_size);
        sub("first_dense_layers", m.moe->first_dense_layers);
        if (m.moe->layer_interval != 1) {
            sub("layer_interval", m.moe->layer_interval);
        }
    }
    if (m.sliding_window) {
        y += "    sliding_window:\n";
        sub("window", m.sliding_window->window);
        sub("windowed_layers", m.sliding_window->windowed_layers);
        if (m.sliding_window->chunked) {
            y += "      chunked: true\n";
        }
    }
    if (m.state) {
        y += "    state:\n";
        y += std::string("      kind: ") + model::name_of(m.state->kind) + "\n";
        sub("state_layers", m.state->state_layers);
        sub("heads", m.state->heads);
        sub("groups", m.state->groups);
        sub("key_dim", m.state->key_dim);
        sub("value_dim", m.state->value_dim);
        sub("conv_kernel", m.state->conv_kernel);
        if (m.state->fp32_state) {
            y += "      fp32_state: true\n";
        }
    }
    if (m.indexer) {
        y += "    indexer:\n";
        sub("heads", m.indexer->heads);
        sub("head_dim", m.indexer->head_dim);
        sub("top_k", m.indexer->top_k);
    }
    if (m.attention_sinks) {
        line("attention_sinks", "true");
    }
    if (m.output_gate) {
        line("output_gate", "true");
    }
    line("published_params", number(m.published_params));
    if (m.published_active_params != 0) {
        line("published_active_params", number(m.published_active_params));
    }
    if (m.weights) {
        line("weights", quoted(m.weights->name));
    }
    if (m.kv_cache) {
        line("kv_cache", quoted(m.kv_cache->name));
    }
    if (!m.checkpoints.empty()) {
        y += "    checkpoints:\n";
        for (const auto& c : m.checkpoints) {
            y += "      " + quoted(c.format) + ": " + quoted(c.hf_id) + "\n";
        }
    }
    line("source", quoted(m.source));
    return y;
}

} // namespace gpuplan::hwdb
