// `gpuplan hw list` and `gpuplan hw show`: browse the hardware database.
#include "cli/cli_context.hpp"
#include "cli/json_out.hpp"
#include "cli/options.hpp"
#include "cli/table.hpp"
#include "hwdb/database.hpp"
#include "model/unit_parser.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>
#include <tuple>

namespace gpuplan::cli {
namespace {

std::string tflops(const std::optional<FlopsPerSecond>& f) {
    return f ? fixed(f->si() / 1e12, 1) : "-";
}

void list_accelerators(CliContext& ctx, const std::string& vendor, bool json) {
    std::vector<const model::AcceleratorSpec*> shown;
    for (const auto& a : ctx.db().accelerators()) {
        if (vendor.empty() || hwdb::normalize_name(a.vendor) == hwdb::normalize_name(vendor)) {
            shown.push_back(&a);
        }
    }
    // Vendor, then generation (launch year), then name: related parts sit together.
    std::stable_sort(shown.begin(), shown.end(), [](const auto* x, const auto* y) {
        return std::tie(x->vendor, x->launch_year, x->name) <
               std::tie(y->vendor, y->launch_year, y->name);
    });
    if (!vendor.empty() && shown.empty()) {
        throw InputError("no accelerators from vendor '" + vendor +
                         "'; try nvidia, amd, intel, google or aws");
    }
    if (json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto* a : shown) {
            out.push_back(to_json(*a));
        }
        *ctx.out << json_text(out) << '\n';
        return;
    }
    Table t({"name", "vendor", "memory", "bandwidth", "bf16 dense", "fp8 dense", "power", "year"});
    for (const auto* a : shown) {
        t.add_row({a->name + (hwdb::is_preliminary(*a) ? " (preliminary)" : ""), a->vendor,
                   model::format_gib(a->memory, 0), model::format_rate(a->memory_bandwidth),
                   tflops(a->dense.bf16 ? a->dense.bf16 : a->dense.fp16) + " TFLOPS",
                   a->dense.fp8 ? tflops(a->dense.fp8) + " TFLOPS" : "-",
                   a->board_power ? fixed(a->board_power->si(), 0) + " W" : "n/p",
                   std::to_string(a->launch_year)});
    }
    t.print(*ctx.out);
    *ctx.out << shown.size()
             << " accelerators; dense peaks, never 2:4-sparse; 'gpuplan hw show NAME' for details "
                "and sources\n";
}

void print_prices(std::ostream& out, const std::vector<model::PriceEstimate>& prices) {
    for (const auto& p : prices) {
        out << "  price             " << model::to_string(p.price) << " (" << p.date << ", "
            << p.source << (p.note.empty() ? "" : "; " + p.note) << ")\n";
    }
}

void print_accelerator(std::ostream& out, const model::AcceleratorSpec& a) {
    const auto& d = a.dense;
    out << a.name << " (" << a.vendor << " " << a.architecture << ", " << a.form_factor << ", "
        << a.launch_year << ")\n";
    if (hwdb::is_preliminary(a)) {
        out << "  PRELIMINARY       announced figures of a part not shipping when written; they "
               "may change\n";
    }
    if (!a.aliases.empty()) {
        std::string list;
        for (const auto& al : a.aliases)
            list += (list.empty() ? "" : ", ") + al;
        out << "  aliases           " << list << '\n';
    }
    out << "  memory            " << model::format_gib(a.memory, 0) << " " << a.memory_type << ", "
        << model::format_rate(a.memory_bandwidth) << '\n'
        << "  dense peaks       ";
    const std::pair<const char*, std::optional<FlopsPerSecond>> peaks[] = {
        {"fp64", d.fp64}, {"fp32", d.fp32}, {"tf32", d.tf32}, {"bf16", d.bf16},
        {"fp16", d.fp16}, {"fp8", d.fp8},   {"int8", d.int8}, {"fp4", d.fp4}};
    bool first = true;
    for (const auto& [name, v] : peaks) {
        if (v) {
            out << (first ? "" : ", ") << name << " " << tflops(v);
            first = false;
        }
    }
    out << " TFLOPS (not 2:4 sparse)\n";
    if (a.l2_cache)
        out << "  L2 cache          " << model::format_gib(*a.l2_cache, 0) << '\n';
    out << "  compute units     " << a.compute_units;
    if (a.boost_clock)
        out << ", boost " << fixed(a.boost_clock->si() / 1e6, 0) << " MHz";
    out << '\n'
        << "  power             "
        << (a.board_power ? fixed(a.board_power->si(), 0) + " W board"
                          : std::string("not published"));
    if (a.idle_power)
        out << ", " << fixed(a.idle_power->si(), 1) << " W idle";
    if (a.power_limit_min && a.power_limit_max)
        out << ", settable " << fixed(a.power_limit_min->si(), 0) << "-"
            << fixed(a.power_limit_max->si(), 0) << " W";
    out << '\n'
        << "  links             "
        << (a.scale_up_link.empty() ? std::string("no scale-up link") : a.scale_up_link);
    if (a.scale_up_bandwidth)
        out << " " << model::format_rate(*a.scale_up_bandwidth) << " bidirectional";
    out << ", host " << a.host_link << '\n';
    print_prices(out, a.prices);
    if (!a.notes.empty())
        out << "  notes             " << a.notes << '\n';
    out << "  sources           " << a.sources << '\n';
}

} // namespace

int run_hw_list(CliContext& ctx) {
    po::options_description desc("options");
    std::string vendor;
    desc.add_options()("vendor", po::value(&vendor),
                       "only this vendor (nvidia, amd, intel, google, aws)")(
        "links", "list interconnects instead")("servers", "list servers instead")(
        "racks", "list racks instead")("json", "machine-readable output");
    po::variables_map vm;
    if (!parse_options("hw list", ctx.args, desc, {}, vm, *ctx.out, "[--vendor V] [--json]")) {
        return 0;
    }
    const bool json = vm.count("json") > 0;
    const auto& db = ctx.db();
    if (vm.count("links")) {
        if (json) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& l : db.interconnects())
                out.push_back(to_json(l));
            *ctx.out << json_text(out) << '\n';
            return 0;
        }
        Table t({"name", "kind", "per direction", "latency"});
        for (const auto& l : db.interconnects()) {
            t.add_row({l.name, model::to_string(l.kind),
                       model::format_rate(l.bandwidth_per_direction),
                       model::format_seconds(l.latency)});
        }
        t.print(*ctx.out);
        return 0;
    }
    if (vm.count("servers")) {
        if (json) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& s : db.servers())
                out.push_back(to_json(s));
            *ctx.out << json_text(out) << '\n';
            return 0;
        }
        Table t({"name", "accelerators", "link", "max power", "host memory", "U"});
        for (const auto& s : db.servers()) {
            t.add_row({s.name,
                       std::to_string(s.accelerators) + " x " +
                           (s.accelerator.empty() ? "any" : s.accelerator),
                       s.intra_node_link, fixed(s.max_power.si() / 1e3, 1) + " kW",
                       model::format_gib(s.host_memory, 0), std::to_string(s.rack_units)});
        }
        t.print(*ctx.out);
        return 0;
    }
    if (vm.count("racks")) {
        if (json) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& r : db.racks())
                out.push_back(to_json(r));
            *ctx.out << json_text(out) << '\n';
            return 0;
        }
        Table t({"name", "servers", "power", "cooling"});
        for (const auto& r : db.racks()) {
            t.add_row({r.name, std::to_string(r.servers) + " x " + r.server,
                       fixed(r.power.si() / 1e3, 1) + " kW", r.cooling});
        }
        t.print(*ctx.out);
        return 0;
    }
    list_accelerators(ctx, vendor, json);
    return 0;
}

int run_hw_show(CliContext& ctx) {
    po::options_description desc("options");
    std::string name;
    desc.add_options()("name", po::value(&name)->required(),
                       "accelerator, server, rack or link name")("json", "machine-readable output");
    po::positional_options_description pos;
    pos.add("name", 1);
    po::variables_map vm;
    if (!parse_options("hw show", ctx.args, desc, pos, vm, *ctx.out, "NAME [--json]")) {
        return 0;
    }
    const auto& db = ctx.db();
    const bool json = vm.count("json") > 0;
    nlohmann::json j;
    if (!db.find_accelerator(name)) {
        // Not an accelerator: try the other kinds before reporting the accelerator miss.
        for (const auto& s : db.servers()) {
            if (hwdb::normalize_name(s.name) == hwdb::normalize_name(name))
                j = to_json(s);
        }
        for (const auto& r : db.racks()) {
            if (hwdb::normalize_name(r.name) == hwdb::normalize_name(name))
                j = to_json(r);
        }
        for (const auto& l : db.interconnects()) {
            if (hwdb::normalize_name(l.name) == hwdb::normalize_name(name))
                j = to_json(l);
        }
    }
    if (j.is_null()) {
        j = to_json(db.accelerator(name)); // throws "did you mean" when unknown
    }
    if (json) {
        *ctx.out << json_text(j) << '\n';
        return 0;
    }
    if (const auto* a = db.find_accelerator(name)) {
        print_accelerator(*ctx.out, *a);
    } else {
        print_key_values(*ctx.out, j, "");
    }
    if (j.contains("sources")) {
        std::string tags = j["sources"].get<std::string>();
        std::size_t start = 0;
        while (start < tags.size()) {
            auto end = tags.find(' ', start);
            const std::string tag =
                tags.substr(start, end == std::string::npos ? std::string::npos : end - start);
            if (auto it = db.sources().find(tag); it != db.sources().end()) {
                *ctx.out << "  [" << tag << "] " << it->second.title << " " << it->second.url
                         << '\n';
            }
            if (end == std::string::npos)
                break;
            start = end + 1;
        }
    }
    return 0;
}

} // namespace gpuplan::cli
