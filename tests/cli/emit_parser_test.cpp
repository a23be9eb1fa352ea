// Every command `--emit` prints, for every example and every engine and for a generated set of
// layouts and formats, parsed against the engines' own flag tables (tests/fixtures/engines/, read
// from their argument parsers at the commits its SOURCE names): an unknown flag, a value of the
// wrong type or outside the parser's choices, a repeated flag, a layout the launcher rejects or
// a word the shell would expand fails the test. A command not emitted must say why.
#include "tests/support/run_cli.hpp"
#include "tests/support/shell_words.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using gpuplan::test::last_command_words;
using gpuplan::test::run_cli;

const std::string kRoot = GPUPLAN_SOURCE_DIR;

struct FlagSpec {
    std::string type; ///< int, float, str, json, flag
    std::set<std::string> choices;
};
using FlagTable = std::map<std::string, FlagSpec>;

FlagTable load_table(const std::string& name) {
    std::ifstream in(kRoot + "/tests/fixtures/engines/" + name);
    EXPECT_TRUE(in) << name;
    FlagTable t;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        std::istringstream row(line);
        std::string flag, type, choices;
        std::getline(row, flag, '\t');
        std::getline(row, type, '\t');
        std::getline(row, choices, '\t');
        FlagSpec s{type, {}};
        if (choices != "-") {
            std::istringstream c(choices);
            for (std::string v; std::getline(c, v, ',');) {
                s.choices.insert(v);
            }
        }
        t[flag] = s;
    }
    return t;
}

bool parses_as(const std::string& type, const std::string& v) {
    try {
        std::size_t used = 0;
        if (type == "int") {
            (void)std::stoll(v, &used);
            return used == v.size();
        }
        if (type == "float") {
            (void)std::stod(v, &used);
            return used == v.size();
        }
        if (type == "json") {
            return nlohmann::json::parse(v).is_object();
        }
        return type == "str";
    } catch (const std::exception&) {
        return false;
    }
}

/// Checks words[first..] against the table; returns flag -> value ("" for a flag).
std::map<std::string, std::string> check_flags(const std::vector<std::string>& w, std::size_t first,
                                               const FlagTable& t, const std::string& cmd) {
    std::map<std::string, std::string> seen;
    for (std::size_t i = first; i < w.size(); ++i) {
        const auto it = t.find(w[i]);
        if (it == t.end()) {
            ADD_FAILURE() << "unknown flag or stray word '" << w[i] << "' in: " << cmd;
            continue;
        }
        EXPECT_EQ(seen.count(w[i]), 0u) << w[i] << " given twice in: " << cmd;
        std::string value;
        if (it->second.type != "flag") {
            if (i + 1 >= w.size()) {
                ADD_FAILURE() << w[i] << " has no value in: " << cmd;
                break;
            }
            value = w[++i];
            EXPECT_TRUE(parses_as(it->second.type, value))
                << w[i - 1] << " " << value << " is not " << it->second.type << " in: " << cmd;
            if (!it->second.choices.empty()) {
                EXPECT_TRUE(it->second.choices.count(value))
                    << w[i - 1] << " " << value
                    << " is not one of the parser's choices in: " << cmd;
            }
        }
        seen[w[i - (it->second.type != "flag" ? 1 : 0)]] = value;
    }
    return seen;
}

int as_int(const std::map<std::string, std::string>& f, const std::string& k, int fallback) {
    const auto it = f.find(k);
    return it == f.end() ? fallback : std::stoi(it->second);
}

struct Tables {
    FlagTable vllm = load_table("vllm.tsv");
    FlagTable bench = load_table("vllm-bench.tsv");
    FlagTable sglang = load_table("sglang.tsv");
    FlagTable trtllm = load_table("trtllm.tsv");
    FlagTable llamacpp = load_table("llamacpp.tsv");
};

const Tables& tables() {
    static const Tables t;
    return t;
}

/// One emitted object ({engine, command, benchmark, notes, refused}) checked; returns whether
/// a command was emitted.
bool check_emit(const nlohmann::json& e, const std::string& what) {
    const std::string engine = e.at("engine");
    if (!e.at("refused").empty()) {
        for (const auto& r : e.at("refused")) {
            const std::string s = r;
            EXPECT_NE(s.find(": "), std::string::npos)
                << what << ": a refusal names its key: " << s;
        }
        EXPECT_TRUE(e.at("command").is_null()) << what;
        return false;
    }
    const std::string cmd = e.at("command");
    std::vector<std::string> w;
    try {
        w = last_command_words(cmd);
    } catch (const std::exception& x) {
        ADD_FAILURE() << what << ": " << x.what();
        return false;
    }
    const Tables& t = tables();
    if (engine == "vllm") {
        EXPECT_GE(w.size(), 3u);
        EXPECT_EQ(w[0] + " " + w[1], "vllm serve") << cmd;
        const auto f = check_flags(w, 3, t.vllm, cmd);
        EXPECT_TRUE(f.count("--tensor-parallel-size")) << cmd;
    } else if (engine == "sglang") {
        EXPECT_EQ(w[0] + " " + w[1] + " " + w[2], "python -m sglang.launch_server") << cmd;
        const auto f = check_flags(w, 3, t.sglang, cmd);
        // SGLang: moe_tp = tp / ep, and dp attention splits the tp group into dp groups.
        const int tp = as_int(f, "--tp-size", 1);
        const int ep = as_int(f, "--ep-size", 1);
        const int dp = as_int(f, "--dp-size", 1);
        EXPECT_EQ(tp % ep, 0) << cmd;
        if (f.count("--enable-dp-attention")) {
            EXPECT_EQ(tp % dp, 0) << cmd;
        }
    } else if (engine == "tensorrt-llm") {
        EXPECT_EQ(w[0], "trtllm-serve") << cmd;
        const auto f = check_flags(w, 2, t.trtllm, cmd);
        // TensorRT-LLM's Mapping: moe_tp x moe_ep = tp.
        EXPECT_EQ(as_int(f, "--tp_size", 1) % as_int(f, "--ep_size", 1), 0) << cmd;
    } else if (engine == "llama.cpp") {
        EXPECT_EQ(w[0], "llama-server") << cmd;
        check_flags(w, 1, t.llamacpp, cmd);
    } else {
        ADD_FAILURE() << "engine " << engine;
    }
    const std::string bench = e.at("benchmark");
    const auto b = last_command_words(bench);
    EXPECT_EQ(b[0] + " " + b[1] + " " + b[2], "vllm bench serve") << bench;
    check_flags(b, 3, t.bench, bench);
    return true;
}

const std::vector<std::string> kEngines{"vllm", "sglang", "tensorrt-llm", "llama.cpp"};

TEST(EmitParser, EveryExampleForEveryEngine) {
    int emitted = 0;
    int answered = 0;
    for (const auto& f : std::filesystem::directory_iterator(kRoot + "/examples")) {
        if (f.path().extension() != ".yaml") {
            continue;
        }
        for (const auto& engine : kEngines) {
            const auto r =
                run_cli("estimate " + f.path().string() + " --emit " + engine + " --json");
            if (r.exit_code != 0) {
                continue; // training and sweep specs are not serving scenarios
            }
            ++answered;
            const auto j = nlohmann::json::parse(r.out);
            ASSERT_TRUE(j.contains("emit")) << f.path();
            emitted += check_emit(j["emit"], f.path().filename().string() + " " + engine) ? 1 : 0;
        }
    }
    // 27 serving examples x 4 engines; most launch on at least one engine.
    EXPECT_GE(answered, 80);
    EXPECT_GE(emitted, answered / 2);
}

TEST(EmitParser, GeneratedLayoutsAndFormats) {
    const std::string moe = kRoot + "/examples/moe-qwen3-235b-ep-h200.yaml";
    const std::string dense = kRoot + "/tests/fixtures/emit/llama70b-4xh100-fp8.yaml";
    std::vector<std::string> cases;
    for (const char* layout : {"--set hardware.tp=8 --set hardware.dp=1 --set hardware.ep=8",
                               "--set hardware.tp=1 --set hardware.dp=8 --set hardware.ep=8",
                               "--set hardware.tp=2 --set hardware.dp=4 --set hardware.ep=8",
                               "--set hardware.tp=4 --set hardware.dp=2 --set hardware.ep=4",
                               "--set hardware.tp=8 --set hardware.dp=1 --set hardware.ep=1"}) {
        for (const char* prec :
             {"", " --set precision.weights=fp8", " --set precision.kv_cache=fp8"}) {
            cases.push_back(moe + " " + layout + prec);
        }
    }
    for (const char* v :
         {"", " --set precision.weights=bf16", " --set precision.weights=awq",
          " --set engine.enable_prefix_caching=true", " --set engine.enforce_eager=true",
          " --set hardware.tp=4 --set hardware.dp=1", " --set engine.kind=sglang",
          " --set engine.kind=tensorrt-llm"}) {
        cases.push_back(dense + v);
    }
    int checked = 0;
    for (const auto& c : cases) {
        for (const auto& engine : kEngines) {
            const auto r = run_cli("estimate " + c + " --emit " + engine + " --json");
            if (r.exit_code != 0) {
                continue; // a --set the scenario refuses
            }
            ++checked;
            check_emit(nlohmann::json::parse(r.out)["emit"], c + " " + engine);
        }
    }
    EXPECT_GE(checked, 60);
}

} // namespace
