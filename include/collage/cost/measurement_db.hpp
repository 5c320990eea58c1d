#pragma once

/// \file
/// MeasurementDb: a plain-text file of measured costs by structural key, and PersistentOracle<G>,
/// which answers from it so a second run measures only what is new.
///
/// File format (UTF-8 or any bytes; one entry per line, sorted by key so the file is
/// deterministic):
///
///     # collage measurements v1
///     <escaped key> TAB <cost> TAB <spread> TAB <samples>
///
/// <cost> is a decimal number, "unknown" or "invalid"; numbers are written with 17 significant
/// digits so they read back exactly. In keys, backslash, tab, newline, carriage return and the
/// other ASCII control bytes are escaped (\\ \t \n \r \xHH), as is a leading '#'; every other
/// byte is written as is, so any byte sequence round-trips. Blank lines and lines starting with
/// '#' are ignored; of two lines with the same key the later wins.

#include <chrono>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <limits>
#include <locale>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <filesystem>

#include "collage/cost/cost_oracle.hpp"
#include "collage/cost/structural_key.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/result.hpp"

namespace collage {

namespace detail {

inline constexpr std::string_view kMeasurementDbHeader = "# collage measurements v1";

/// `key` with the bytes that would break a line escaped (see the file comment).
inline std::string escape_db_key(std::string_view key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(key.size());
  for (std::size_t k = 0; k < key.size(); ++k) {
    const auto c = static_cast<unsigned char>(key[k]);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f || (k == 0 && c == '#')) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The key escape_db_key() wrote, or nothing when `text` is not a valid escaped key.
inline std::optional<std::string> unescape_db_key(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t k = 0; k < text.size(); ++k) {
    if (text[k] != '\\') {
      out += text[k];
      continue;
    }
    if (++k == text.size()) return std::nullopt;
    switch (text[k]) {
      case '\\': out += '\\'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 'x': {
        if (k + 2 >= text.size()) return std::nullopt;
        const int hi = hex_digit(text[k + 1]);
        const int lo = hex_digit(text[k + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        k += 2;
        break;
      }
      default: return std::nullopt;
    }
  }
  return out;
}

/// `v` in the classic locale with 17 significant digits (reads back exactly).
inline std::string format_double(double v) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(17);
  os << v;
  return os.str();
}

/// The whole of `text` as a finite double in the classic locale, or nothing.
inline std::optional<double> parse_double(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::istringstream is{std::string(text)};
  is.imbue(std::locale::classic());
  double v = 0;
  is >> v;
  if (is.fail() || is.peek() != std::char_traits<char>::eof()) return std::nullopt;
  if (!(v == v) || v == std::numeric_limits<double>::infinity() || v == -std::numeric_limits<double>::infinity()) {
    return std::nullopt;
  }
  return v;
}

/// The whole of `text` as a count, or nothing.
inline std::optional<std::size_t> parse_count(std::string_view text) {
  if (text.empty()) return std::nullopt;
  constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();
  std::size_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto d = static_cast<std::size_t>(c - '0');
    if (v > (kMax - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

inline std::string format_cost(Cost c) {
  if (c.is_unknown()) return "unknown";
  if (c.is_invalid()) return "invalid";
  return format_double(c.raw());
}

inline std::optional<Cost> parse_cost(std::string_view text) {
  if (text == "unknown") return Cost::unknown();
  if (text == "invalid") return Cost::invalid();
  std::optional<double> v = parse_double(text);
  if (!v || *v < 0) return std::nullopt;
  return Cost::value(*v);
}

}  // namespace detail

/// A persistent map from key (normally a structural_key()) to Measurement, kept in a plain-text
/// file (see the file comment). Loading and saving report problems as values.
class MeasurementDb {
 public:
  /// An empty database that is not tied to a file (save() fails until one is named).
  MeasurementDb() = default;
  /// An empty database that save() writes to `path`.
  explicit MeasurementDb(std::string path) : path_(std::move(path)) {}

  /// Reads `path`. A missing file gives an empty database tied to `path`; an unreadable file or
  /// a malformed line gives an Error naming the file and the line number.
  static Result<MeasurementDb> load(const std::string& path) {
    MeasurementDb db(path);
    std::error_code ec;
    const bool exists = std::filesystem::exists(std::filesystem::path(path), ec);
    if (ec) return Error{ErrorCode::io, "cannot read measurement database '" + path + "': " + ec.message()};
    if (!exists) return db;
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{ErrorCode::io, "cannot open measurement database '" + path + "'"};
    std::string line;
    std::size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.empty() || line[0] == '#') continue;
      if (Status s = db.parse_line(line); !s.ok()) {
        return Error{ErrorCode::parse, path + ":" + std::to_string(line_no) + ": " + s.message()};
      }
    }
    if (in.bad()) return Error{ErrorCode::io, "error reading measurement database '" + path + "'"};
    db.dirty_ = false;
    return db;
  }

  /// Writes every entry to the file, sorted by key: first to a temporary file beside it, then
  /// renamed over it, so a crash never leaves a half-written database.
  Status save() const { return save_as(path_); }

  /// save() to another file (the database stays tied to its own path).
  Status save_as(const std::string& path) const {
    if (path.empty()) return Error{ErrorCode::invalid_argument, "the measurement database has no file to save to"};
    const std::string tmp =
        path + ".tmp" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) return Error{ErrorCode::io, "cannot write measurement database '" + tmp + "'"};
      out << detail::kMeasurementDbHeader << '\n';
      for (const auto& [key, m] : entries_) {
        out << detail::escape_db_key(key) << '\t' << detail::format_cost(m.cost) << '\t'
            << detail::format_double(m.spread) << '\t' << m.samples << '\n';
      }
      out.flush();
      if (!out) {
        out.close();
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        return Error{ErrorCode::io, "error writing measurement database '" + tmp + "'"};
      }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      return Error{ErrorCode::io, "cannot replace measurement database '" + path + "': " + ec.message()};
    }
    dirty_ = false;
    return Status::success();
  }

  /// The measurement stored under `key`, if any.
  std::optional<Measurement> find(std::string_view key) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }

  /// Stores `m` under `key`, replacing what was there.
  void put(std::string key, Measurement m) {
    entries_.insert_or_assign(std::move(key), m);
    dirty_ = true;
  }

  /// Removes `key`; false when it was absent.
  bool erase(std::string_view key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    entries_.erase(it);
    dirty_ = true;
    return true;
  }

  /// Number of entries.
  std::size_t size() const { return entries_.size(); }
  /// Whether there are no entries.
  bool empty() const { return entries_.empty(); }
  /// The file save() writes.
  const std::string& path() const { return path_; }
  /// Whether there are changes that save() has not written.
  bool dirty() const { return dirty_; }
  /// The entries in key order.
  const std::map<std::string, Measurement, std::less<>>& entries() const { return entries_; }

 private:
  Status parse_line(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t start = 0;
    while (true) {
      const std::size_t tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    if (!line.empty() && line.back() == '\r' && fields.size() == 4) fields[3].remove_suffix(1);
    if (fields.size() != 4) {
      return Error{ErrorCode::parse, "expected 4 tab-separated fields (key, cost, spread, samples), found " +
                   std::to_string(fields.size())};
    }
    std::optional<std::string> key = detail::unescape_db_key(fields[0]);
    if (!key) return Error{ErrorCode::parse, "malformed escape in key"};
    std::optional<Cost> cost = detail::parse_cost(fields[1]);
    if (!cost) return Error{ErrorCode::parse, "malformed cost '" + std::string(fields[1]) + "'"};
    std::optional<double> spread = detail::parse_double(fields[2]);
    if (!spread || *spread < 0) return Error{ErrorCode::parse, "malformed spread '" + std::string(fields[2]) + "'"};
    std::optional<std::size_t> samples = detail::parse_count(fields[3]);
    if (!samples) return Error{ErrorCode::parse, "malformed sample count '" + std::string(fields[3]) + "'"};
    entries_.insert_or_assign(std::move(*key), Measurement{*cost, *spread, *samples});
    return Status::success();
  }

  std::string path_;
  std::map<std::string, Measurement, std::less<>> entries_;
  mutable bool dirty_ = false;
};

/// Wraps an oracle and answers from a MeasurementDb, keyed by `key_prefix + structural_key()`;
/// what the database lacks goes to the wrapped oracle (misses of a batch as one batch) and its
/// answer is recorded, with the spread and sample count a MeasuringOracle reports (0 and 1 for a
/// plain oracle). Known and Invalid costs are recorded; Unknown answers (e.g. a spent budget) and
/// Errors (which may be passing) are not, so a later run asks again. Entries with an Unknown cost
/// count as absent.
///
/// The database is borrowed and must outlive the oracle; the caller saves it. The wrapped oracle
/// is borrowed or owned, as for CachingOracle. Use `key_prefix` to keep measurements of several
/// machines or oracle versions apart in one file.
template <class G>
class PersistentOracle final : public detail::OracleWrapper<G> {
 public:
  /// Answers from `db`, else from `inner` (both must outlive this oracle).
  PersistentOracle(CostOracle<G>& inner, MeasurementDb& db, std::string key_prefix = {})
      : detail::OracleWrapper<G>(inner), db_(&db), prefix_(std::move(key_prefix)) {}
  /// Answers from `db` (which must outlive this oracle), else from `inner` (owned).
  PersistentOracle(std::unique_ptr<CostOracle<G>> inner, MeasurementDb& db, std::string key_prefix = {})
      : detail::OracleWrapper<G>(std::move(inner)), db_(&db), prefix_(std::move(key_prefix)) {}

  /// The stored measurement, or the wrapped oracle's (then stored).
  Result<Measurement> measure(const DataflowGraph<G>& graph, const Candidate& candidate,
                              const ExtractionView& view) override {
    ++this->own_.calls;
    std::string key = prefix_ + structural_key(graph, candidate, view);
    if (std::optional<Measurement> m = lookup(key)) {
      ++this->own_.db_hits;
      return *m;
    }
    Result<Measurement> m = this->forward(graph, candidate, view);
    record(std::move(key), m);
    return m;
  }

  /// Stored measurements from the database; the rest (one per key) from the wrapped oracle in
  /// one batch. Keys are made once per group of structurally equal candidates
  /// (group_by_structure()).
  std::vector<Result<Measurement>> measure_batch(const DataflowGraph<G>& graph,
                                                 const std::vector<const Candidate*>& candidates) override {
    this->own_.calls += candidates.size();
    KeyedBatch<Result<Measurement>> batch = split_by_key<Result<Measurement>>(
        graph, candidates,
        [&](const std::string& key) -> std::optional<Result<Measurement>> {
          if (std::optional<Measurement> m = lookup(key)) return Result<Measurement>(*m);
          return std::nullopt;
        },
        prefix_);
    const std::vector<Result<Measurement>> answers = this->forward_batch(graph, batch.misses);
    for (std::size_t m = 0; m < answers.size(); ++m) record(std::move(batch.miss_keys[m]), answers[m]);
    this->own_.db_hits += batch.stored_candidates();
    return batch.per_candidate(answers);
  }

  /// "persistent(<wrapped oracle>)".
  std::string name() const override { return "persistent(" + this->inner().name() + ")"; }

  /// The database answers come from.
  const MeasurementDb& db() const { return *db_; }

 private:
  /// The stored measurement of `key`, unless absent or Unknown.
  std::optional<Measurement> lookup(const std::string& key) const {
    std::optional<Measurement> m = db_->find(key);
    if (!m || m->cost.is_unknown()) return std::nullopt;
    return m;
  }
  void record(std::string key, const Result<Measurement>& m) {
    if (m.ok() && !m->cost.is_unknown()) db_->put(std::move(key), *m);
  }

  MeasurementDb* db_;
  std::string prefix_;
};

}  // namespace collage
