// Issue 33: hostile and malformed input against the surface of the last wave. Nothing a user
// types or a file says crashes a run, prints an impossible figure or is silently dropped: each
// case is a reproduction from the issue, and each exits 2 with a message naming its input, or
// gives the right answer where the input is valid.
#include "tests/support/run_cli.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using gpuplan::test::RunResult;

RunResult run(const std::string& args) {
    return gpuplan::test::run_cli(args);
}

std::string src(const std::string& rel) {
    return std::string(GPUPLAN_SOURCE_DIR) + "/" + rel;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

struct TempDir {
    fs::path path;
    explicit TempDir(const std::string& name)
        : path(fs::temp_directory_path() / ("gpuplan-hostile-" + name)) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    [[nodiscard]] std::string operator/(const std::string& name) const {
        return (path / name).string();
    }
};

void write(const std::string& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
}

std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void expect_refused(const RunResult& r, const std::vector<std::string>& parts) {
    EXPECT_EQ(r.exit_code, 2) << r.out;
    for (const auto& p : parts) {
        EXPECT_TRUE(has(r.out, p)) << "missing '" << p << "' in:\n" << r.out;
    }
    EXPECT_FALSE(has(r.out, "internal error")) << r.out;
}

const std::string kExample = src("examples/llama70b-2xh200.yaml");

} // namespace

// (2) Names that read as numbers are names: every command that prints one answers, whole.
TEST(HostileInput, NamesThatReadAsNumbersArePrintedNotRefused) {
    for (const std::string name : {"inf", "nan", "Infinity", "inf-test", "NaN budget", "-inf"}) {
        for (const std::string cmd : {"estimate", "fit", "cost", "rack"}) {
            SCOPED_TRACE(cmd + " " + name);
            const std::string args = cmd + " " + kExample + " --set 'name=" + name + "'";
            const RunResult text = run(args);
            ASSERT_EQ(text.exit_code, 0) << text.out;
            EXPECT_FALSE(has(text.out, "not a finite number")) << text.out;
            const RunResult json = run(args + " --json");
            ASSERT_EQ(json.exit_code, 0) << json.out;
            // The whole document, not one cut at the line with the name.
            EXPECT_TRUE(nlohmann::json::accept(json.out)) << json.out;
        }
    }
    // A file nan.yaml without a name: the scenario is named after the file.
    TempDir d("names");
    std::string base = slurp(kExample);
    base.erase(base.find("name: llama70b-2xh200\n"), 22);
    write(d / "nan.yaml", base);
    const RunResult r = run("estimate " + (d / "nan.yaml"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(has(r.out, "nan")) << r.out;
    // A sweep whose id is inf.
    write(d / "inf.yaml", "id: inf\ncommand: estimate\nbase: " + kExample +
                              "\naxes:\n  - key: workload.concurrency\n    values: [8, 16]\n");
    const RunResult s = run("sweep " + (d / "inf.yaml") + " -o " + (d / "t.csv"));
    EXPECT_EQ(s.exit_code, 0) << s.out;
    EXPECT_TRUE(has(s.out, "sweep inf: 2 points")) << s.out;
}

// (6) An alias on the command line would make a value that contains itself: refused as in a
// file, naming the flag (it was a segmentation fault).
TEST(HostileInput, SetValuesGoThroughTheFileParserRules) {
    expect_refused(run("estimate " + kExample + " --set 'description=&a [*a]'"),
                   {"--set description=&a [*a]: ", "anchors ('&name') are not allowed"});
    expect_refused(run("estimate " + kExample + " --set 'description=*a'"),
                   {"--set description=*a: ", "invalid YAML"});
    expect_refused(run("estimate " + kExample + " --set 'hardware={tp: 2, tp: 4}'"),
                   {"--set hardware={tp: 2, tp: 4}: "});
    // A bad value names the flag, not the file's line.
    expect_refused(run("estimate " + kExample + " --set hardware.tp=four"),
                   {"--set hardware.tp=four: hardware.tp:"});
}

// (6) A class routed to the cloud needs a cloud endpoint: every request was rejected silently.
TEST(HostileInput, ACloudRouteWithoutACloudBlockIsRefused) {
    TempDir d("cloud");
    std::string base = slurp(src("examples/simulate-chat.yaml"));
    base.replace(base.find("    - name: chat\n"), 17, "    - name: chat\n      route: cloud\n");
    write(d / "cloud.yaml", base);
    expect_refused(run("simulate " + (d / "cloud.yaml")),
                   {d / "cloud.yaml", "workload.classes[0].route: 'cloud' sends the class to the "
                                      "cloud endpoint and the scenario has no cluster.cloud"});
}

// (6) A class name is any text: requests.csv quotes it, so the file reads back as columns.
TEST(HostileInput, RequestsCsvQuotesClassNames) {
    TempDir d("csv");
    const RunResult r =
        run("simulate " + src("examples/simulate-chat.yaml") +
            " --set workload.duration='5 s' --set 'workload.classes=[{name: \"a,b \\\"c\\\"\"}]' "
            "--out " +
            (d / "out"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string csv = slurp(d / "out/requests.csv");
    std::istringstream lines(csv);
    std::string header, row;
    std::getline(lines, header);
    ASSERT_TRUE(std::getline(lines, row)) << csv;
    // RFC 4180: the field quoted, its quotes doubled.
    EXPECT_TRUE(row.find(",\"a,b \"\"c\"\"\",") != std::string::npos) << row;
}

// (6) A pool never takes a prompt longer than its max_prompt_tokens: with no pool long enough
// the request is rejected (it went to every pool).
TEST(HostileInput, NoPoolTakesAPromptOverItsBound) {
    TempDir d("pools");
    const RunResult r = run("simulate " + src("examples/heterogeneous-h100-l4.yaml") +
                            " --set cluster.pools.0.max_prompt_tokens=1500 --set "
                            "workload.duration='20 s' --out " +
                            (d / "out"));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    std::istringstream lines(slurp(d / "out/requests.csv"));
    std::string line;
    std::getline(lines, line);
    ASSERT_TRUE(has(line, "outcome")) << line;
    int long_prompts = 0;
    while (std::getline(lines, line)) {
        // id,class,session,step,replica,outcome,arrival_s,queue_s,ttft_s,tpot_s,e2e_s,input_tokens
        std::vector<std::string> f;
        std::stringstream ls(line);
        for (std::string cell; std::getline(ls, cell, ',');) {
            f.push_back(cell);
        }
        ASSERT_GE(f.size(), 12u) << line;
        if (std::stoi(f[11]) > 1500) {
            ++long_prompts;
            EXPECT_EQ(f[5], "rejected") << line;
            EXPECT_EQ(f[4], "-1") << line; // no replica took it
        }
    }
    EXPECT_GT(long_prompts, 0); // RAG prompts are 5,000 shared + 500 to 1,500 tokens
}

// (5) Periods from input are bounded before the run: each was a hang or 4 GB.
TEST(HostileInput, PeriodsThatWouldNeverEndAreRefusedAtOnce) {
    const auto refused_fast = [](const std::string& args, const std::string& key) {
        SCOPED_TRACE(args);
        const auto started = std::chrono::steady_clock::now();
        expect_refused(run(args), {key + ": ", "above the simulator's limit of 10000000"});
        EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                  30.0);
    };
    const std::string failures = src("examples/failures-serving-sim-llama8b-h100.yaml");
    refused_fast("simulate " + failures + " --set cluster.failures.mtbf='1 ns'",
                 "cluster.failures.mtbf");
    refused_fast("simulate " + failures +
                     " --set 'cluster.failures.degraded_link={mtbf: 1 ns, bandwidth_factor: 0.5}'",
                 "cluster.failures.degraded_link.mtbf");
    refused_fast("simulate " + src("examples/autoscaling-llama8b-diurnal.yaml") +
                     " --set cluster.autoscaler.interval='1 ns'",
                 "cluster.autoscaler.interval");
}

TEST(HostileInput, AFleetTooLargeToScanIsRefusedAtOnce) {
    const auto started = std::chrono::steady_clock::now();
    expect_refused(run("plan " + src("examples/fleet-year-llama70b-h100.yaml") +
                       " --fleet --set workload.requests_per_s=500000"),
                   {"the owned-against-rented scan would run", "above the limit of 1e8"});
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              30.0);
}

// (4) Sweep tables: a cut row, another spec's or shard's rows, empty parts and text with line
// breaks.
TEST(HostileInput, SweepTablesCannotBeCorruptedSilently) {
    TempDir d("sweep");
    const std::string axes = "axes:\n  - key: workload.concurrency\n    values: [8, 16, 32]\n";
    write(d / "a.yaml", "id: a\ncommand: estimate\nbase: " + kExample + "\n" + axes);
    write(d / "b.yaml", "id: b\ncommand: estimate\nbase: " + kExample + "\n" + axes);
    ASSERT_EQ(run("sweep " + (d / "a.yaml") + " -o " + (d / "a.csv")).exit_code, 0);
    ASSERT_EQ(run("sweep " + (d / "b.yaml") + " -o " + (d / "b.csv")).exit_code, 0);
    // Another spec's table with the same columns: --resume and merge refuse it.
    expect_refused(run("sweep " + (d / "b.yaml") + " -o " + (d / "a.csv") + " --resume"),
                   {d / "a.csv", "is from another sweep spec"});
    expect_refused(run("merge " + (d / "m.csv") + " " + (d / "a.csv") + " " + (d / "b.csv")),
                   {d / "b.csv", "is from another sweep spec than " + (d / "a.csv")});
    // Another shard's table.
    expect_refused(
        run("sweep " + (d / "a.yaml") + " -o " + (d / "a.csv") + " --resume --shard 1/2"),
        {"is not in shard 1/2"});
    // A row cut in half: refused, not kept.
    const std::string csv = slurp(d / "a.csv");
    write(d / "a.csv", csv.substr(0, csv.size() - 10));
    expect_refused(run("sweep " + (d / "a.yaml") + " -o " + (d / "a.csv") + " --resume"),
                   {d / "a.csv" + ":4: the last row is cut off"});
    // Empty shards: a header alone, which merge refuses to take for a whole table.
    write(d / "one.yaml", "id: one\ncommand: estimate\nbase: " + kExample +
                              "\naxes:\n  - key: workload.concurrency\n    values: [8]\n");
    ASSERT_EQ(run("sweep " + (d / "one.yaml") + " -o " + (d / "e.csv") + " --shard 1/2").exit_code,
              0);
    expect_refused(run("merge " + (d / "m.csv") + " " + (d / "e.csv")), {"hold no rows"});
    EXPECT_FALSE(fs::exists(d / "m.csv"));
    write(d / "h.csv", "");
    write(d / "h.jsonl", "");
    expect_refused(run("merge " + (d / "m.csv") + " " + (d / "h.csv")), {"empty, not a sweep"});
    // A line break in a set: value (in the cli column) and in the sweep id round-trips through
    // --resume and merge.
    write(d / "nl.yaml", "id: \"two\\nlines, \\\"q\\\"\"\ncommand: estimate\nbase: " + kExample +
                             "\nset:\n  description: \"x\\ny\"\naxes:\n  - key: "
                             "workload.concurrency\n    values: [8]\n");
    ASSERT_EQ(run("sweep " + (d / "nl.yaml") + " -o " + (d / "nl.csv")).exit_code, 0);
    const RunResult again = run("sweep " + (d / "nl.yaml") + " -o " + (d / "nl.csv") + " --resume");
    EXPECT_EQ(again.exit_code, 0) << again.out;
    EXPECT_TRUE(has(again.out, "1 skipped")) << again.out;
    const RunResult merged = run("merge " + (d / "nm.csv") + " " + (d / "nl.csv"));
    EXPECT_EQ(merged.exit_code, 0) << merged.out;
    EXPECT_EQ(slurp(d / "nm.csv"), slurp(d / "nl.csv"));
}
