// Every file in tests/fixtures/malformed/ starts with "# expect: TEXT"; loading it must throw a
// ConfigError whose message contains TEXT (file:line:column and key path included).
#include "hwdb/database.hpp"

#include "model/error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpuplan;

namespace {

std::vector<std::filesystem::path> malformed_files() {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) +
                                                             "/tests/fixtures/malformed")) {
        out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string expectation(const std::string& text) {
    const std::string marker = "# expect: ";
    if (text.rfind(marker, 0) != 0) {
        return {};
    }
    return text.substr(marker.size(), text.find('\n') - marker.size());
}

} // namespace

TEST(MalformedInput, AtLeastTwentyCases) {
    EXPECT_GE(malformed_files().size(), 20u);
}

TEST(MalformedInput, EachFileGivesItsExpectedMessage) {
    for (const auto& path : malformed_files()) {
        SCOPED_TRACE(path.filename().string());
        const std::string text = read(path);
        const std::string expected = expectation(text);
        ASSERT_FALSE(expected.empty()) << "fixture lacks its '# expect:' line";
        hwdb::Database db;
        try {
            db.add_yaml(text, "case.yaml");
            ADD_FAILURE() << "no error";
        } catch (const ConfigError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("case.yaml:", 0), 0u) << what;
            EXPECT_NE(what.find(expected), std::string::npos) << "got: " << what;
        }
    }
}
