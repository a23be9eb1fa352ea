// Format detection for the kernel-level data sets of Blackwell, Hopper and AMD GPUs (the
// triton-cublas, cudnn-*, azure-bench, aiter-gemm/aiter-moe and torchao-moe importers).
#include "calib/importers_detail.hpp"

#include <cctype>
#include <sstream>
#include <string>
#include <vector>

namespace gpuplan::calib::detail {

std::optional<Format> detect_kernel_set_format(const std::filesystem::path& path,
                                               std::string_view first_line) {
    const std::string name = path.filename().string();
    if (path.extension() == ".md") {
        // Azure_Results/ND_<VM>_results.md, or the excerpts of them (.excerpt.md)
        if (name.rfind("ND_", 0) == 0 && name.find("_results") != std::string::npos) {
            return Format::AzureBench;
        }
        // torchao/prototype/moe_training/README.md, or its excerpt (README.excerpt.md)
        if (name.rfind("README", 0) == 0 && path.parent_path().filename() == "moe_training") {
            return Format::TorchaoMoe;
        }
        return std::nullopt;
    }
    if (path.extension() != ".csv") {
        return std::nullopt;
    }
    const auto starts = [&](std::string_view p) { return first_line.rfind(p, 0) == 0; };
    if (starts("K,triton_tflops,cublas_tflops")) {
        return Format::TritonCublas;
    }
    if (starts("batch_size,q_seqlen,kv_seqlen,num_q_heads") ||
        starts("config_name,model_name,backend,data_type,attn_mask")) {
        return Format::CudnnSdpa;
    }
    if (starts("config_name,norm_name,norm_type")) {
        return Format::CudnnNorms;
    }
    // aiter's dense GEMM tables; the batched table (a B column) is not a GEMM of one weight
    // matrix and is left out. The fused-MoE tables (token, model_dim, ...) are grouped GEMMs.
    if (starts("gfx,cu_num,M,N,K,")) {
        return Format::AiterGemm;
    }
    if ((starts("cu_num,token,model_dim,inter_dim,expert,topk,") ||
         starts("gfx,cu_num,token,model_dim,inter_dim,expert,topk,"))) {
        return Format::AiterMoe;
    }
    return std::nullopt;
}

namespace {

std::string first_word(const std::string& s) {
    std::istringstream in(s);
    std::string w;
    in >> w;
    return w;
}

std::string trim_left(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    return b == std::string::npos ? "" : s.substr(b);
}

bool is_commit(const std::string& s) {
    if (s.size() != 40) {
        return false;
    }
    for (const char c : s) {
        if (!std::isxdigit(static_cast<unsigned char>(c))) {
            return false;
        }
    }
    return true;
}

} // namespace

std::string citation_from_source_md(std::string_view source_md, const std::string& rel_path) {
    std::string rel = rel_path;
    if (const auto at = rel.rfind(".excerpt."); at != std::string::npos) {
        rel.erase(at, 8); // NAME.excerpt.md -> NAME.md
    }
    std::string repo, commit, cite_repo, cite_commit, path_commit;
    // The bullets "- **<commit>** ...", each with the text up to the next bullet.
    std::vector<std::pair<std::string, std::string>> bullets;
    std::istringstream in{std::string(source_md)};
    std::string line;
    bool in_bullet = false;
    while (std::getline(in, line)) {
        const std::string t = trim_left(line);
        const bool bullet = t.rfind("- ", 0) == 0;
        if (bullet) {
            in_bullet = false;
        }
        if (line.rfind("- Repository:", 0) == 0 && repo.empty()) {
            repo = first_word(line.substr(13));
        } else if (line.rfind("- Commit:", 0) == 0 && commit.empty()) {
            commit = first_word(line.substr(9));
        } else if (line.rfind("- Cite as ", 0) == 0 && cite_repo.empty()) {
            const std::string w = first_word(line.substr(10));
            const auto at = w.find('@');
            const auto colon = w.find(':', at == std::string::npos ? 0 : at);
            if (at != std::string::npos && colon != std::string::npos &&
                is_commit(w.substr(at + 1, colon - at - 1))) {
                cite_repo = w.substr(0, at);
                cite_commit = w.substr(at + 1, colon - at - 1);
            }
        } else if (bullet && t.rfind("- **", 0) == 0 && t.size() > 48 &&
                   is_commit(t.substr(4, 40)) && t.compare(44, 2, "**") == 0) {
            bullets.emplace_back(t.substr(4, 40), t.substr(46));
            in_bullet = true;
            continue;
        }
        if (in_bullet && !bullets.empty()) {
            bullets.back().second += " " + t;
        }
    }
    for (const auto& [hex, text] : bullets) {
        // every `quoted` path in the bullet, up to a pattern ({a,b}, <x>), is a prefix it covers
        for (std::size_t b = text.find('`'); b != std::string::npos && path_commit.empty();
             b = text.find('`', b + 1)) {
            const auto e = text.find('`', b + 1);
            if (e == std::string::npos) {
                break;
            }
            std::string prefix = text.substr(b + 1, e - b - 1);
            prefix = prefix.substr(0, prefix.find_first_of("{<*"));
            if (!prefix.empty() && rel.rfind(prefix, 0) == 0) {
                path_commit = hex;
            }
            b = e;
        }
    }
    if (!cite_repo.empty()) {
        repo = cite_repo;
        commit = cite_commit;
    }
    if (!path_commit.empty()) {
        commit = path_commit;
    }
    if (repo.empty() || commit.empty()) {
        return "";
    }
    return repo + "@" + commit + ":" + rel;
}

std::vector<std::string> markdown_cells(const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
        if (line[i] == '|') {
            const auto b = cell.find_first_not_of(" \t");
            const auto e = cell.find_last_not_of(" \t");
            out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
            cell.clear();
        } else {
            cell += line[i];
        }
    }
    return out;
}

} // namespace gpuplan::calib::detail
