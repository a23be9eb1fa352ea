#pragma once
/// Reads request traces from CSV into model::TraceRecord values for the simulator's trace
/// replay. Three layouts are understood, by their header:
///  - Azure LLM inference trace (2023/2024): `TIMESTAMP,ContextTokens,GeneratedTokens`, with
///    timestamps such as `2023-11-16 18:15:46.6805900` (or plain seconds);
///  - Vidur's trace-replay form: `arrived_at,num_prefill_tokens,num_decode_tokens` (seconds);
///  - plain: `arrival_s,input_tokens,output_tokens` (seconds).
/// Arrival times are made relative to the first record; records are returned in file order.

#include "model/workload.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::hwdb {

/// The CSV layouts of a trace.
enum class TraceFormat { Auto, Azure, Vidur, Plain };

/// Parses "auto", "azure", "vidur", "plain"; nullopt otherwise.
[[nodiscard]] std::optional<TraceFormat> find_trace_format(std::string_view name);

/// Parses trace CSV text; `file` names it in messages. Auto picks the layout from the header.
/// Throws InputError naming file:line for a missing column, a bad number, negative tokens or
/// an empty trace.
[[nodiscard]] std::vector<model::TraceRecord>
parse_trace(std::string_view text, const std::string& file, TraceFormat format = TraceFormat::Auto);

/// Reads and parses a trace file.
[[nodiscard]] std::vector<model::TraceRecord> load_trace(const std::filesystem::path& path,
                                                         TraceFormat format = TraceFormat::Auto);

/// The most tokens one length may have (2^28, as the scenario file's length keys allow).
inline constexpr int kMaxTokenCount = 1 << 28;

/// `v` as a token count when it is a whole number from `min` to kMaxTokenCount; nullopt for
/// anything else (NaN, infinity, negative, fractional, too large). The one check for token
/// counts read from traces, length files and empirical lists.
[[nodiscard]] std::optional<int> token_count(double v, int min = 0);

/// One numeric column of a CSV file as lengths (for empirical length distributions): the
/// column named `column`, or the first column when empty. Throws InputError.
[[nodiscard]] std::vector<int> load_length_column(const std::filesystem::path& path,
                                                  const std::string& column);

} // namespace gpuplan::hwdb
