// One question, one answer: the same scenario asked through estimate, fit, cost, compare, rack
// and simulate must give the same shared figures (docs/operating-point.md lists the
// invariants). Runs the real binary on every example and on a generated set of scenarios.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <tuple>
#include <vector>

namespace {

using nlohmann::json;

/// Runs `gpuplan ARGS --json` and parses its standard output; the test fails on a non-zero exit.
json run_json(const std::string& args) {
    const std::string cmd = std::string(GPUPLAN_CLI) + " " + args + " --json 2>/dev/null";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) {
        out.append(buf, n);
    }
    const int status = pclose(pipe);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    EXPECT_EQ(code, 0) << "gpuplan " << args;
    if (code != 0) {
        return json();
    }
    return json::parse(out);
}

/// The figures every command must agree on for one scenario, given as CLI arguments (a file
/// or flags). `capped`: the scenario has a power limit, so estimate prints its power section.
void check_agreement(const std::string& scenario, bool capped) {
    SCOPED_TRACE(scenario);
    const json est = run_json("estimate " + scenario);
    const json fit = run_json("fit " + scenario);
    const json cost = run_json("cost " + scenario);
    if (est.is_null() || fit.is_null() || cost.is_null()) {
        return;
    }
    // 1. Memory: one verdict and one KV pool.
    EXPECT_EQ(est["fits"], fit["fits"]);
    EXPECT_EQ(est["memory"]["kv_blocks"], fit["memory"]["kv_blocks"]);
    EXPECT_EQ(est["memory"]["kv_tokens"], fit["memory"]["kv_tokens"]);
    if (!est["fits"].get<bool>()) {
        return;
    }
    // 2. One operating point, and the throughput at it. Under a power cap the load is the same
    // but what follows from the capacity (the mean in flight at a rate, the utilisation) is
    // computed at the capped clock, as cost reports it.
    const json& op = est["operating_point"];
    for (const char* key : {"kind", "requests_per_s", "defaulted"}) {
        EXPECT_EQ(op[key], cost["operating_point"][key]) << key;
    }
    if (!capped || op["kind"] == "closed_loop") {
        EXPECT_EQ(op, cost["operating_point"]);
    }
    const double throughput = capped ? est["power"]["throughput_capped_tok_s"].get<double>()
                                     : est["throughput_tok_s"].get<double>();
    EXPECT_DOUBLE_EQ(cost["throughput_tok_s"].get<double>(), throughput);
    // 3. compare prices the scenario's own configuration as cost does, to the cent.
    const json cmp = run_json(
        "compare " + scenario + " --with " + est["accelerator"].get<std::string>() + ":" +
        std::to_string(est["gpus"].get<int>()) + ":" + std::to_string(est["tp"].get<int>()));
    if (cmp.is_array() && !cost["rent_monthly"].is_null()) {
        EXPECT_EQ(cmp[0]["rent_source"], cost["rent_source"]);
        EXPECT_EQ(cmp[0]["operating_point"], est["operating_point"]);
        if (!capped) {
            EXPECT_NEAR(cmp[0]["cost_per_million_tokens"].get<double>(),
                        cost["rent_per_million_tokens"].get<double>(), 0.005);
        }
    }
    // 4. One rack model: estimate's nodes per rack under the limit are rack's on its peak basis.
    if (capped) {
        const json rack = run_json("rack " + scenario + " --basis peak");
        if (!rack.is_null()) {
            const json& over = rack["oversubscription"];
            EXPECT_EQ(est["power"]["nodes_per_rack_capped"], over["nodes_per_rack_capped"]);
            EXPECT_EQ(est["power"]["nodes_per_rack_uncapped"], over["nodes_per_rack_uncapped"]);
            for (const json& basis : rack["bases"]) {
                if (basis["basis"] == "peak") {
                    EXPECT_EQ(est["power"]["rack_binding_capped"], basis["binding"]);
                }
            }
        }
    }
}

/// `plan` pinned to the scenario's own configuration (its GPU, its tensor-parallel size as the
/// only layout, no more GPUs than that) prices the same configuration as `cost`, to the cent.
void check_plan_pinned(const std::string& args, const json& est, const std::string& gpu, int tp,
                       const std::string& weights) {
    SCOPED_TRACE("plan " + args);
    const json cost = run_json("cost " + args);
    const json plan =
        run_json("plan " + args + " --candidate " + gpu + " --max-gpus " + std::to_string(tp) +
                 " --requests 200 --max-simulations 1 --threads 1");
    if (cost.is_null() || plan.is_null()) {
        return;
    }
    if (est.contains("launch_problems")) {
        // The engine cannot launch it as estimated (model/engine_rules.hpp: fp8 on an A100, ...):
        // estimate warns, and plan leaves the configuration out of its search.
        EXPECT_TRUE(plan["ranked"].empty()) << est["launch_problems"].dump();
        return;
    }
    const json& utilisation = est["operating_point"]["utilisation"];
    if (!utilisation.is_null() && utilisation.get<double>() > 1.0) {
        // Offered more than it serves: estimate says the queue grows without bound, and plan
        // says this configuration does not sustain the rate.
        EXPECT_TRUE(plan["ranked"].empty());
        EXPECT_NE(plan["closest_miss"]["reason"].get<std::string>().find("sustain"),
                  std::string::npos);
        return;
    }
    if (cost["own_monthly"].is_null()) {
        // No purchase price: cost leaves ownership blank, and plan (ranking by ownership) says
        // so instead of ranking the configuration.
        EXPECT_TRUE(plan["ranked"].empty());
        EXPECT_NE(plan["closest_miss"]["reason"].get<std::string>().find("no purchase price"),
                  std::string::npos);
        return;
    }
    const json* row = nullptr;
    for (const json& r : plan["ranked"]) {
        if (r["tp"] == tp && r["gpus"] == tp && r["pp"] == 1 && r["weights"] == weights) {
            row = &r;
        }
    }
    ASSERT_NE(row, nullptr) << "the scenario's own configuration is missing from the plan";
    EXPECT_DOUBLE_EQ((*row)["tokens_per_month"].get<double>(),
                     cost["tokens_per_month"].get<double>());
    for (const char* key : {"own_monthly", "rent_monthly"}) {
        if (cost[key].is_null()) {
            EXPECT_TRUE((*row)[key].is_null()) << key;
        } else {
            EXPECT_NEAR((*row)[key].get<double>(), cost[key].get<double>(), 0.005) << key;
        }
    }
}

/// The simulator at the same operating point reaches the analytic steady state: output
/// throughput within 15 % and mean TPOT within 20 % (the run includes its ramp-up and drain,
/// which the steady state has not, and steps through the context the analytic cycle averages).
void check_simulator(const std::string& args, const json& est, bool capped) {
    SCOPED_TRACE("simulate " + args);
    const json& op = est["operating_point"];
    const int in_flight = op["concurrency"].is_null() ? 16 : op["concurrency"].get<int>();
    const int requests = std::max(300, 6 * in_flight);
    const json sim = run_json("simulate " + args + " --requests " + std::to_string(requests));
    if (sim.is_null()) {
        return;
    }
    EXPECT_EQ(sim["operating_point"]["kind"], op["kind"]);
    const double throughput = capped ? est["power"]["throughput_capped_tok_s"].get<double>()
                                     : est["throughput_tok_s"].get<double>();
    const double tpot =
        capped ? est["power"]["tpot_capped_s"].get<double>() : est["tpot_s"].get<double>();
    EXPECT_NEAR(sim["output_tok_s"].get<double>() / throughput, 1.0, 0.15);
    EXPECT_NEAR(sim["tpot_s"]["mean"].get<double>() / tpot, 1.0, 0.20);
}

std::string example(const std::string& name) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name;
}

} // namespace

TEST(Consistency, EveryServingExampleGetsOneAnswer) {
    for (const char* name :
         {"7b-on-rtx4090.yaml", "cost-rent-vs-buy.yaml", "deepseek-v3-8xh200.yaml",
          "llama70b-2xh200.yaml", "llama70b-4xh100.yaml", "long-context-rag.yaml",
          "quickstart.yaml", "qwen7b-gptq-rtx4090.yaml", "simulate-chat.yaml",
          "plan-search.yaml"}) {
        check_agreement(example(name), false);
    }
    check_agreement(example("rack-power-cap.yaml") + " --gpu-cap 400W", true);
}

TEST(Consistency, GeneratedScenariosGetOneAnswer) {
    // Models × GPUs × precisions × layouts × loads × prices × power caps, walked with a stride
    // so that every value of every axis appears (200 of the 1,920 combinations). Each runs
    // through fit, estimate, cost, compare, rack (when capped), plan pinned to its own
    // configuration and simulate.
    const std::vector<std::string> models = {"llama-3.1-8b", "llama-3.1-70b", "qwen2.5-32b",
                                             "mixtral-8x7b"};
    const std::vector<std::string> gpus = {"h100-sxm --node dgx-h100", "a100-sxm-80gb", "h200-sxm",
                                           "l40s", "mi300x"};
    const std::vector<std::string> weights = {"bf16", "fp8"};
    const std::vector<int> tps = {1, 2, 4, 8};
    const std::vector<std::string> loads = {"", "--concurrency 16", "--rate 2"};
    const std::vector<std::string> prices = {"", "--gpu-hour '$3.10/h' --electricity '$0.12/kWh'"};
    const std::vector<std::string> caps = {"", "--gpu-cap 400W"};
    const std::size_t total = models.size() * gpus.size() * weights.size() * tps.size() *
                              loads.size() * prices.size() * caps.size();
    int checked = 0;
    for (std::size_t i = 0; i < total && checked < 200; i += 9, ++checked) {
        std::size_t k = i;
        const auto pick = [&k](const auto& axis) {
            const auto& v = axis[k % axis.size()];
            k /= axis.size();
            return v;
        };
        const std::string model = pick(models);
        const std::string gpu = pick(gpus);
        const std::string w = pick(weights);
        const int tp = pick(tps);
        const std::string load = pick(loads);
        const std::string price = pick(prices);
        const std::string cap = pick(caps);
        // cost takes the price flags; the other commands read the same prices from a file, so
        // price flags are exercised through cost and the rent source of compare below.
        const std::string args = "--model " + model + " --gpu " + gpu + " --weights " + w +
                                 " --tp " + std::to_string(tp) + " --max-model-len 8192 " + load +
                                 " " + cap;
        // Configurations the engine cannot run (tp not dividing the heads, fp8 on a GPU without
        // fp8) are refused with exit 2 by every command alike.
        const std::string probe = std::string(GPUPLAN_CLI) + " fit " + args + " >/dev/null 2>&1";
        const int status = std::system(probe.c_str());
        if (WEXITSTATUS(status) == 2) {
            for (const char* cmd : {"estimate", "cost"}) {
                const std::string c =
                    std::string(GPUPLAN_CLI) + " " + cmd + " " + args + " >/dev/null 2>&1";
                EXPECT_EQ(WEXITSTATUS(std::system(c.c_str())), 2) << cmd << " " << args;
            }
            continue;
        }
        check_agreement(args, !cap.empty());
        const json est = run_json("estimate " + args);
        if (!est.is_null() && est["fits"].get<bool>()) {
            // The plan candidate names the node as GPU@NODE, so that both price a node share.
            std::string candidate = gpu;
            if (const auto at = candidate.find(" --node "); at != std::string::npos) {
                candidate.replace(at, 8, "@");
            }
            check_plan_pinned(args, est, candidate, tp, w);
            check_simulator(args, est, !cap.empty());
        }
        if (!price.empty()) {
            const json cost = run_json("cost " + args + " " + price);
            if (!cost.is_null() && !cost["rent_source"].is_null()) {
                EXPECT_EQ(cost["rent_source"], "prices.gpu_hour") << args;
            }
        }
    }
    EXPECT_EQ(checked, 200);
}

TEST(Consistency, TheSimulatorRunsTheSameDefaultClosedLoop) {
    // The quickstart without its concurrency: no load given, so every command uses the default
    // closed loop, and the simulator runs that same closed loop (not Poisson at 1 request/s).
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / "gpuplan-consistency-noload";
    std::filesystem::create_directories(dir);
    const std::string file = (dir / "noload.yaml").string();
    std::ifstream in(example("quickstart.yaml"));
    std::ofstream yaml(file);
    for (std::string line; std::getline(in, line);) {
        if (line.find("concurrency:") == std::string::npos) {
            yaml << line << '\n';
        }
    }
    yaml.close();
    const json est = run_json("estimate " + file);
    const json sim = run_json("simulate " + file + " --requests 2000");
    ASSERT_FALSE(est.is_null());
    ASSERT_FALSE(sim.is_null());
    EXPECT_TRUE(est["operating_point"]["defaulted"].get<bool>());
    EXPECT_EQ(est["operating_point"], sim["operating_point"]);
    // Steady state: the simulator's closed loop serves within 10 % of the analytic throughput
    // (the analytic steady cycle averages the context; the simulator steps through it).
    const double analytic = est["throughput_tok_s"].get<double>();
    EXPECT_NEAR(sim["output_tok_s"].get<double>() / analytic, 1.0, 0.10);
    std::filesystem::remove_all(dir);
}

// The reproductions of "one answer per question" (issue 18), each with its one answer.

TEST(OneAnswer, CompareWithOtherGpusUsesTheirOwnHwdbRentNotTheScenarios) {
    // The scenario prices its H100 at $2.99/h; an H200 and a B200 get their hwdb prices.
    const json cmp =
        run_json("compare " + example("llama70b-4xh100.yaml") + " --with h200-sxm:2 --with b200:1");
    ASSERT_TRUE(cmp.is_array());
    ASSERT_EQ(cmp.size(), 3u);
    EXPECT_EQ(cmp[0]["rent_source"], "prices.gpu_hour");
    EXPECT_DOUBLE_EQ(cmp[0]["rent_per_hour"].get<double>(), 4 * 2.99);
    for (const auto& [row, gpu, count] : {std::tuple{1, "h200-sxm", 2}, std::tuple{2, "b200", 1}}) {
        // The newest hourly price in the hwdb entry, read through `hw show`.
        const json hw = run_json(std::string("hw show ") + gpu);
        double hourly = 0;
        std::string date;
        for (const json& p : hw["prices"]) {
            if (p["per"] == "h" && p["date"].get<std::string>() > date) {
                date = p["date"];
                hourly = p["amount"];
            }
        }
        ASSERT_GT(hourly, 0) << gpu;
        EXPECT_DOUBLE_EQ(cmp[row]["rent_per_hour"].get<double>(), count * hourly) << gpu;
        const std::string source = cmp[row]["rent_source"];
        EXPECT_EQ(source.rfind(std::string("hwdb ") + gpu, 0), 0u) << source;
        EXPECT_NE(source.find(date), std::string::npos) << source;
    }
}

TEST(OneAnswer, EstimateAndRackGiveTheSameNodesPerRackUnderACap) {
    // 400 W per GPU: the PDU (two 32 A feeds, 35.47 kW derated) binds at 5 nodes of 6.00 kW,
    // before the 40 kW budget's 6.
    const std::string file = example("rack-power-cap.yaml") + " --gpu-cap 400W";
    const json est = run_json("estimate " + file);
    const json rack = run_json("rack " + file);
    EXPECT_EQ(est["power"]["nodes_per_rack_capped"], 5);
    EXPECT_EQ(est["power"]["rack_binding_capped"], "pdu");
    EXPECT_EQ(rack["oversubscription"]["nodes_per_rack_capped"], 5);
}

TEST(OneAnswer, CostWithoutALoadSaysWhichLoadItUsed) {
    const json cost = run_json("cost --model llama-3.1-70b --gpu h100-sxm --node dgx-h100 --tp 8");
    ASSERT_FALSE(cost.is_null());
    EXPECT_EQ(cost["operating_point"]["kind"], "closed_loop");
    EXPECT_TRUE(cost["operating_point"]["defaulted"].get<bool>());
    EXPECT_GT(cost["operating_point"]["concurrency"].get<int>(), 1);
    // And it names what the cost of owning leaves out: no electricity price was given.
    bool energy = false;
    for (const json& x : cost["excluded"]) {
        energy = energy || x.get<std::string>().rfind("energy", 0) == 0;
    }
    EXPECT_TRUE(energy);
}

TEST(OneAnswer, APlanRowAndCostOfThatConfigurationAgreeToTheCent) {
    // The plan's cheapest row, asked again through `cost` with the row's configuration as flags:
    // the same load (the class mix at 12 requests/s), the same power at that load, the same price.
    const std::string file = example("plan-search.yaml");
    const json plan = run_json("plan " + file);
    ASSERT_FALSE(plan.is_null());
    ASSERT_FALSE(plan["ranked"].empty());
    const json& row = plan["ranked"][0];
    const json cost = run_json(
        "cost " + file + " --gpu " + row["gpu"].get<std::string>() + " --tp " +
        std::to_string(row["tp"].get<int>()) + " --pp " + std::to_string(row["pp"].get<int>()) +
        " --gpus " + std::to_string(row["gpus"].get<int>()) + " --weights " +
        row["weights"].get<std::string>() + " --kv " + row["kv_cache"].get<std::string>() +
        " --max-num-seqs " + std::to_string(row["max_num_seqs"].get<int>()));
    ASSERT_FALSE(cost.is_null());
    EXPECT_NEAR(cost["own_monthly"].get<double>(), row["own_monthly"].get<double>(), 0.005);
    EXPECT_NEAR(cost["rent_monthly"].get<double>(), row["rent_monthly"].get<double>(), 0.005);
    EXPECT_NEAR(cost["own_per_million_tokens"].get<double>(),
                row["per_million_tokens"].get<double>(), 0.005);
    EXPECT_DOUBLE_EQ(cost["tokens_per_month"].get<double>(), row["tokens_per_month"].get<double>());
}

TEST(OneAnswer, SpeculativeFiguresAgreeAcrossEstimateSimulateAndPlan) {
    // Llama-3.1-8B drafting k = 4 tokens for Llama-3.1-70B at α = 0.7 (the example's block):
    // E = (1 − 0.7^5) / (1 − 0.7) tokens per verify step (Leviathan et al. eq. 1).
    const std::string file = example("speculative-llama70b-h100.yaml");
    const double expected = (1 - std::pow(0.7, 5)) / (1 - 0.7);
    const json est = run_json("estimate " + file);
    const json sim = run_json("simulate " + file + " --requests 60");
    // One sequence at a time, where speculation pays (the verify pass is bandwidth-bound): at
    // the same GPUs the speculative layout serves more tokens for the money and is the answer.
    const json plan = run_json("plan " + file + " --set workload.concurrency=1");
    ASSERT_FALSE(est.is_null() || sim.is_null() || plan.is_null());
    EXPECT_NEAR(est["speculative"]["tokens_per_step"].get<double>(), expected, 1e-12);
    EXPECT_NEAR(sim["speculative"]["expected_tokens_per_step"].get<double>(), expected, 1e-12);
    EXPECT_EQ(est["speculative"]["num_speculative_tokens"],
              sim["speculative"]["num_speculative_tokens"]);
    EXPECT_EQ(est["speculative"]["method"], sim["speculative"]["method"]);
    // The run's draws average close to the closed form.
    EXPECT_NEAR(sim["speculative"]["tokens_per_step"].get<double>(), expected, 0.1 * expected);
    // plan: its answer speculates, with estimate's figures for that configuration (the
    // example's own layout, tp 4 on 4 GPUs, at concurrency 1).
    ASSERT_TRUE(plan.contains("answer_speculative")) << plan.dump();
    EXPECT_TRUE(plan["ranked"][0]["speculative"].get<bool>());
    EXPECT_NEAR(plan["answer_speculative"]["tokens_per_step"].get<double>(), expected, 1e-12);
    EXPECT_EQ(plan["answer_speculative"]["method"], est["speculative"]["method"]);
    const json one = run_json("estimate " + file + " --set workload.concurrency=1");
    ASSERT_FALSE(one.is_null());
    EXPECT_DOUBLE_EQ(plan["answer_speculative"]["speedup"].get<double>(),
                     one["speculative"]["speedup"].get<double>());
    EXPECT_DOUBLE_EQ(plan["answer_speculative"]["tpot_without_s"].get<double>(),
                     one["speculative"]["tpot_without_s"].get<double>());
}

TEST(OneAnswer, DisaggregationFiguresAgreeAcrossEstimateSimulateAndPlan) {
    // The example's 3,000-token prompts: Llama-3.1-70B's KV is 2 × 80 layers × 8 KV heads × 128
    // × 2 bytes a token; tp 4 on both pools sends over four NDR links (50 GB/s each, 5 µs).
    const std::string file = example("disaggregated-llama70b-h100.yaml");
    const double bytes = 2.0 * 80 * 8 * 128 * 2 * 3000;
    const double transfer = 5e-6 + bytes / (4 * 50e9);
    const json est = run_json("estimate " + file);
    const json sim = run_json("simulate " + file);
    const json plan = run_json("plan " + file);
    ASSERT_FALSE(est.is_null() || sim.is_null() || plan.is_null());
    const json& e = est["disaggregation"];
    const json& d = sim["disaggregation"];
    EXPECT_DOUBLE_EQ(e["kv_bytes"].get<double>(), bytes);
    EXPECT_NEAR(e["transfer_s"].get<double>(), transfer, 1e-12);
    // Every simulated transfer is that one (to the nanosecond tick).
    EXPECT_NEAR(d["transfer_time"]["mean_s"].get<double>(), transfer, 1e-9);
    EXPECT_NEAR(d["transfer_time"]["p99_s"].get<double>(), transfer, 1e-9);
    EXPECT_DOUBLE_EQ(d["kv_bytes"].get<double>(), bytes * d["transfers"].get<double>());
    // Link utilisation: the analytic rate × T ÷ prefill replicas against the run's Σ T ÷ span.
    EXPECT_NEAR(e["link_utilisation"].get<double>(), 2.5 * transfer / 2, 1e-12);
    EXPECT_NEAR(d["link_utilisation"].get<double>(), e["link_utilisation"].get<double>(),
                0.15 * e["link_utilisation"].get<double>());
    // plan's P:D comparison runs the scenario's own split: the same transfer.
    bool found = false;
    for (const json& l : plan["disaggregation"]["layouts"]) {
        if (l["name"] == "2P x tp4 : 2D x tp4" && l["simulated"].get<bool>()) {
            found = true;
            EXPECT_NEAR(l["transfer_mean_s"].get<double>(), transfer, 1e-9);
        }
    }
    EXPECT_TRUE(found) << plan["disaggregation"].dump();
}
