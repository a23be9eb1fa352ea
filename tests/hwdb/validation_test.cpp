// Issue 12: garbage that used to be accepted silently is refused where it enters the loaders:
// token counts of traces, length files and empirical lists; hwdb name clashes; imported models
// the catalog would not load; and command-line values are located by their flag, not 1:1.
#include "hwdb/database.hpp"
#include "hwdb/hf_import.hpp"
#include "hwdb/scenario_loader.hpp"
#include "hwdb/trace_loader.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

using namespace gpuplan;

namespace {

const hwdb::Database& db() {
    static const hwdb::Database d =
        hwdb::Database::load({std::string(GPUPLAN_SOURCE_DIR) + "/hwdb"});
    return d;
}

constexpr const char* kBase = R"(schema: 1
model: llama-3.1-8b
hardware:
  accelerator: h100-sxm
)";

template <class F> std::string error_of(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

std::string scenario_error(const std::string& extra,
                           const std::vector<hwdb::ScenarioOverride>& o = {}) {
    return error_of(
        [&] { (void)hwdb::parse_scenario(std::string(kBase) + extra, "s.yaml", db(), o); });
}

std::filesystem::path temp_dir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / ("gpuplan-validation-" + name);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

void write(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

constexpr const char* kLink = R"(schema: 1
interconnects:
  - name: %NAME%
    %ALIASES%kind: pcie
    bandwidth_per_direction: 1 GB/s
    latency: 1 us
    sources: x
)";

std::string link_yaml(const std::string& name, const std::string& aliases = "") {
    std::string s = kLink;
    s.replace(s.find("%NAME%"), 6, name);
    s.replace(s.find("%ALIASES%"), 9, aliases.empty() ? "" : "aliases: [" + aliases + "]\n    ");
    return s;
}

} // namespace

TEST(TokenCounts, OneCheckForEveryReader) {
    EXPECT_EQ(hwdb::token_count(100), 100);
    EXPECT_EQ(hwdb::token_count(0), 0);
    EXPECT_FALSE(hwdb::token_count(0, 1));
    EXPECT_FALSE(hwdb::token_count(-5));
    EXPECT_FALSE(hwdb::token_count(1e300));
    EXPECT_FALSE(hwdb::token_count(std::nan("")));
    EXPECT_FALSE(hwdb::token_count(2.5));
    EXPECT_EQ(hwdb::token_count(1 << 28), 1 << 28);
    EXPECT_FALSE(hwdb::token_count((1 << 28) + 1));
}

TEST(TokenCounts, TraceRowsWithBadLengthsOrNegativeTimesAreRefused) {
    const std::string head = "arrival_s,input_tokens,output_tokens\n";
    EXPECT_EQ(error_of([&] { (void)hwdb::parse_trace(head + "0,-5,10\n", "t.csv"); }),
              "t.csv:2: token counts '-5', '10' must be whole numbers, input from 1 and output "
              "from 0, up to 268435456");
    EXPECT_EQ(error_of([&] { (void)hwdb::parse_trace(head + "0,0,10\n", "t.csv"); }),
              "t.csv:2: token counts '0', '10' must be whole numbers, input from 1 and output "
              "from 0, up to 268435456");
    EXPECT_NE(error_of([&] {
                  (void)hwdb::parse_trace(head + "0,1e300,10\n", "t.csv");
              }).find("must be whole numbers"),
              std::string::npos);
    EXPECT_EQ(error_of([&] { (void)hwdb::parse_trace(head + "-5,100,10\n1,100,10\n", "t.csv"); }),
              "t.csv:2: arrival time '-5' is negative; give seconds from the start of the trace "
              "(>= 0)");
}

TEST(TokenCounts, LengthFileFirstRowIsCheckedLikeTheRest) {
    const auto dir = temp_dir("lengths");
    write(dir / "l.csv", "-5\n100\n");
    EXPECT_EQ(error_of([&] { (void)hwdb::load_length_column(dir / "l.csv", ""); }),
              (dir / "l.csv").string() +
                  ":1: '-5' is not a token count; give whole numbers from 0 to 268435456");
    write(dir / "m.csv", "len\n100\nnan\n");
    EXPECT_EQ(error_of([&] { (void)hwdb::load_length_column(dir / "m.csv", "len"); }),
              (dir / "m.csv").string() +
                  ":3: 'nan' is not a token count; give whole numbers from 0 to 268435456");
    std::filesystem::remove_all(dir);
}

TEST(TokenCounts, EmpiricalValuesNanNegativeOrHugeAreRefused) {
    const auto yaml = [](const char* v) {
        return std::string("workload:\n  classes:\n    - name: c\n      input: {dist: empirical, "
                           "values: [100, ") +
               v + "]}\n";
    };
    for (const auto& [v, shown] : {std::pair{"nan", "nan"}, {"-5", "-5"}, {"1e300", "1e+300"}}) {
        const std::string e = scenario_error(yaml(v));
        EXPECT_NE(e.find("workload.classes[0].input.values: '" + std::string(shown) +
                         "' is not a token count; give whole numbers from 0 to 268435456"),
                  std::string::npos)
            << e;
    }
}

TEST(CommandLineValues, PlanFlagErrorsNameTheFlagNotLineOne) {
    const std::string e = scenario_error("", {{"plan.tp", "[0]", "--tp 0"}});
    EXPECT_EQ(e.rfind("--tp 0: plan.tp: '0' is not a whole number from 1 to 1024", 0), 0u) << e;
    const std::string s = scenario_error("", {{"plan.top", "0"}});
    EXPECT_EQ(s.rfind("--set plan.top=0: plan.top: ", 0), 0u) << s;
    EXPECT_EQ(s.find(":1:1:"), std::string::npos) << s;
}

TEST(HwdbClashes, DuplicateOrClashingNamesInOneFolderAreRefused) {
    const auto dir = temp_dir("clash");
    write(dir / "a.yaml", link_yaml("l"));
    write(dir / "b.yaml", link_yaml("m", "L"));
    const std::string e = error_of([&] { (void)hwdb::Database::load({dir}); });
    EXPECT_EQ(e, (dir / "b.yaml").string() +
                     ": interconnect 'm': its alias 'L' is also a name or "
                     "alias of interconnect 'l' in " +
                     (dir / "a.yaml").string() +
                     "; rename one (names and aliases are unique in a folder)");
    write(dir / "b.yaml", link_yaml("l"));
    EXPECT_EQ(error_of([&] { (void)hwdb::Database::load({dir}); }),
              (dir / "b.yaml").string() + ": interconnect 'l': defined twice (also in " +
                  (dir / "a.yaml").string() + "); keep one entry per name in a folder");
    std::filesystem::remove_all(dir);
}

TEST(HwdbClashes, AcrossFoldersTheLaterWinsAndNotesSaySo) {
    hwdb::Database d;
    d.add_yaml(link_yaml("l"), "a.yaml");
    d.add_yaml(link_yaml("l"), "b.yaml");
    d.add_yaml(link_yaml("m", "l"), "c.yaml");
    ASSERT_EQ(d.notes().size(), 2u);
    EXPECT_EQ(d.notes()[0], "interconnect 'l' from b.yaml replaces the one from a.yaml");
    EXPECT_EQ(d.notes()[1], "interconnect name 'l' now means 'm' from c.yaml, not 'l' from b.yaml");
    EXPECT_EQ(d.interconnect("l").name, "m"); // the later folder wins for aliases too
    EXPECT_TRUE(db().notes().empty());        // the shipped hwdb has no clash
}

TEST(ModelImport, AppliesTheCatalogsOwnValidation) {
    const auto config = [](const std::string& layers, const std::string& heads,
                           const std::string& vocab) {
        return R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                   "num_hidden_layers": )" +
               layers + R"(, "hidden_size": 4096,
                   "num_attention_heads": )" +
               heads + R"(, "num_key_value_heads": )" + heads +
               R"(, "intermediate_size": 14336, "vocab_size": )" + vocab +
               R"(, "max_position_embeddings": 8192})";
    };
    EXPECT_EQ(error_of([&] {
                  (void)hwdb::import_hf_config(config("32", "3", "128256"), "config.json", "x");
              }),
              "config.json: num_attention_heads: 3 heads do not divide hidden_size 4096; give "
              "head_dim or a head count that divides hidden_size");
    const std::string vocab = error_of([&] {
        (void)hwdb::import_hf_config(config("32", "32", "2147483647"), "config.json", "x");
    });
    EXPECT_EQ(
        vocab.rfind("config.json: the imported model would not load into the catalog: key '", 0),
        0u)
        << vocab;
    EXPECT_NE(vocab.find("vocab_size'"), std::string::npos) << vocab;
    EXPECT_NE(vocab.find("'2147483647' is out of range"), std::string::npos) << vocab;
    const std::string layers = error_of([&] {
        (void)hwdb::import_hf_config(config("1000000", "32", "128256"), "config.json", "x");
    });
    EXPECT_NE(layers.find("the imported model would not load into the catalog"), std::string::npos)
        << layers;
}
