#pragma once

/// \file
/// MeasurementDb: a plain-text file of measured costs by oracle identity and structural key, and
/// PersistentOracle<G>, which answers from it so a second run measures only what is new.
///
/// File format (UTF-8 or any bytes; one entry per line, sorted by identity then key so the file
/// is deterministic):
///
///     # collage measurements v2
///     <escaped identity> TAB <escaped key> TAB <cost> TAB <spread> TAB <samples>
///
/// The identity names the cost model that measured the entry ("name@version", see
/// PersistentOracle); the key is normally a structural_key(). <cost> is a number, "unknown" or
/// "invalid"; <spread> a number or "inf"; numbers are written by format_double() (the shortest
/// text that reads back exactly, the same under every locale). In identities and keys,
/// backslash, tab, newline, carriage return and the other ASCII control bytes are escaped (\\ \t
/// \n \r \xHH), as is a leading '#'; every other byte is written as is, so any byte sequence
/// round-trips. Blank lines and lines starting with '#' are ignored; of two lines with the same
/// identity and key the later wins.
///
/// A file of the first format ("# collage measurements v1", or no header: <key> TAB <cost> TAB
/// <spread> TAB <samples>, written before entries named their cost model) loads with every entry
/// under the empty identity, which no PersistentOracle serves, and is saved in the current
/// format with those entries kept. MeasurementDb::move_identity() hands them to the cost model
/// that measured them, when that is known.

#include <chrono>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <filesystem>

#if defined(__unix__) || defined(__APPLE__)
#define COLLAGE_MEASUREMENT_DB_FLOCK 1
#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#else
#define COLLAGE_MEASUREMENT_DB_FLOCK 0
#endif

#include "collage/cost/cost_oracle.hpp"
#include "collage/cost/measurement_store.hpp"
#include "collage/cost/structural_key.hpp"
#include "collage/support/cost.hpp"
#include "collage/support/numbers.hpp"
#include "collage/support/result.hpp"

namespace collage {

namespace detail {

inline constexpr std::string_view kMeasurementDbHeader = "# collage measurements v";
inline constexpr std::size_t kMeasurementDbVersion = 2;

/// `field` (an identity or a key) with the bytes that would break a line escaped (see the file
/// comment).
inline std::string escape_db_field(std::string_view field) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(field.size());
  for (std::size_t k = 0; k < field.size(); ++k) {
    const auto c = static_cast<unsigned char>(field[k]);
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

/// An exclusive lock on a lock file, held until destruction: flock() on POSIX systems (which
/// serialises threads of one process too, each opening the file itself); elsewhere acquire()
/// succeeds without locking.
class FileLock {
 public:
  FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock() {
#if COLLAGE_MEASUREMENT_DB_FLOCK
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
#endif
  }

  /// Creates `path` when missing and waits for the exclusive lock on it.
  Status acquire(const std::string& path) {
#if COLLAGE_MEASUREMENT_DB_FLOCK
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      return Error{ErrorCode::io, "cannot open lock file '" + path + "': " + std::generic_category().message(errno)};
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      return Error{ErrorCode::io, "cannot lock '" + path + "': " + std::generic_category().message(errno)};
    }
#else
    (void)path;
#endif
    return Status::success();
  }

 private:
#if COLLAGE_MEASUREMENT_DB_FLOCK
  int fd_ = -1;
#endif
};

inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The field escape_db_field() wrote, or nothing when `text` is not a valid escaped field.
inline std::optional<std::string> unescape_db_field(std::string_view text) {
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

}  // namespace detail

/// A persistent map from (oracle identity, key) to Measurement, kept in a plain-text file (see
/// the file comment). Loading and saving report problems as values.
class MeasurementDb final : public MeasurementStore {
 public:
  /// The entries of one identity, by key.
  using Table = std::map<std::string, Measurement, std::less<>>;

  /// An empty database that is not tied to a file (save() fails until one is named).
  MeasurementDb() = default;
  /// An empty database that save() writes to `path`.
  explicit MeasurementDb(std::string path) : path_(std::move(path)) {}

  /// Reads `path`. A missing file gives an empty database tied to `path`; an unreadable file, a
  /// format this version does not know or a malformed line gives an Error naming the file (and
  /// the line number).
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
    std::size_t version = 1;
    while (std::getline(in, line)) {
      ++line_no;
      if (line_no == 1 && line.rfind(detail::kMeasurementDbHeader, 0) == 0) {
        std::string_view number(line);
        number.remove_prefix(detail::kMeasurementDbHeader.size());
        if (!number.empty() && number.back() == '\r') number.remove_suffix(1);
        std::optional<std::size_t> v = parse_index(number);
        if (!v || *v == 0 || *v > detail::kMeasurementDbVersion) {
          return Error{ErrorCode::parse, path + ":1: unknown measurement database format '" + line +
                                             "' (this version of collage reads v1 and v" +
                                             std::to_string(detail::kMeasurementDbVersion) + ")"};
        }
        version = *v;
        continue;
      }
      if (line.empty() || line[0] == '#') continue;
      if (Status s = db.parse_line(line, version); !s.ok()) {
        return Error{ErrorCode::parse, path + ":" + std::to_string(line_no) + ": " + s.message()};
      }
    }
    if (in.bad()) return Error{ErrorCode::io, "error reading measurement database '" + path + "'"};
    db.dirty_ = false;
    return db;
  }

  /// Writes the entries to the file, sorted by identity and key, merged with what the file holds
  /// then: under an exclusive lock (see below) it reads the file again, keeps the entries of the
  /// file that this database lacks, drops those this database erased (erase(), move_identity())
  /// since it was loaded or last saved, and writes this database's own entries over the rest (on
  /// equal identity and key, the entry in memory wins). So several processes or threads, each
  /// with its own MeasurementDb of one file, may save at any time and no one loses another's
  /// entries. The database in memory is unchanged (load() again to see the others' entries).
  ///
  /// The file is written to a temporary file beside it, then renamed over it, so a crash never
  /// leaves a half-written database and load() needs no lock. On POSIX systems the lock is a
  /// flock() on "<file>.lock", which is created beside the file and left there; elsewhere saves
  /// merge but are not serialised. A file that cannot be read back (malformed, of an unknown
  /// format) fails the save rather than being overwritten.
  Status save() const { return save_as(path_); }

  /// save() to another file (the database stays tied to its own path; its erasures apply to its
  /// own file only).
  Status save_as(const std::string& path) const {
    if (path.empty()) return Error{ErrorCode::invalid_argument, "the measurement database has no file to save to"};
    detail::FileLock lock;
    if (Status locked = lock.acquire(path + ".lock"); !locked.ok()) return locked;
    Result<MeasurementDb> on_disk = load(path);
    if (!on_disk.ok()) {
      return Error{on_disk.error().code, "cannot merge with measurement database on disk: " + on_disk.error().message};
    }
    std::map<std::string, Table, std::less<>> merged = std::move(on_disk->tables_);
    const bool own_file = path == path_;
    if (own_file) {
      for (const auto& [identity, key] : erased_) {
        auto table = merged.find(identity);
        if (table == merged.end()) continue;
        table->second.erase(key);
        if (table->second.empty()) merged.erase(table);
      }
    }
    for (const auto& [identity, table] : tables_) {
      Table& into = merged[identity];
      for (const auto& [key, m] : table) into.insert_or_assign(key, m);
    }
    if (Status written = write_file(path, merged); !written.ok()) return written;
    dirty_ = false;
    if (own_file) erased_.clear();
    return Status::success();
  }

  /// The measurement stored under `identity` and `key`, if any.
  std::optional<Measurement> find(std::string_view identity, std::string_view key) const override {
    auto table = tables_.find(identity);
    if (table == tables_.end()) return std::nullopt;
    auto it = table->second.find(key);
    if (it == table->second.end()) return std::nullopt;
    return it->second;
  }

  /// Stores `m` under `identity` and `key`, replacing what was there.
  void put(std::string_view identity, std::string key, Measurement m) override {
    auto table = tables_.find(identity);
    if (table == tables_.end()) table = tables_.emplace(std::string(identity), Table{}).first;
    if (!erased_.empty()) erased_.erase({std::string(identity), key});
    table->second.insert_or_assign(std::move(key), m);
    dirty_ = true;
  }

  /// Removes the entry of `identity` and `key`; false when it was absent.
  bool erase(std::string_view identity, std::string_view key) {
    auto table = tables_.find(identity);
    if (table == tables_.end()) return false;
    auto it = table->second.find(key);
    if (it == table->second.end()) return false;
    erased_.emplace(std::string(identity), std::string(key));
    table->second.erase(it);
    if (table->second.empty()) tables_.erase(table);
    dirty_ = true;
    return true;
  }

  /// Hands every entry of identity `from` to identity `to` (for instance the entries of a v1 file,
  /// under the empty identity, to the cost model that measured them); where `to` already has a
  /// key, its own entry stays. Returns the number of entries that left `from`.
  std::size_t move_identity(std::string_view from, std::string_view to) {
    if (from == to) return 0;
    auto source = tables_.find(from);
    if (source == tables_.end()) return 0;
    Table moved = std::move(source->second);
    tables_.erase(source);
    for (const auto& entry : moved) erased_.emplace(std::string(from), entry.first);
    for (auto& [key, m] : moved) {
      if (!find(to, key)) put(to, key, m);
    }
    dirty_ = true;
    return moved.size();
  }

  /// Number of entries.
  std::size_t size() const {
    std::size_t n = 0;
    for (const auto& entry : tables_) n += entry.second.size();
    return n;
  }
  /// Whether there are no entries.
  bool empty() const { return tables_.empty(); }
  /// The file save() writes.
  const std::string& path() const { return path_; }
  /// Whether there are changes that save() has not written.
  bool dirty() const { return dirty_; }
  /// The entries by identity, then key, in order.
  const std::map<std::string, Table, std::less<>>& entries() const { return tables_; }

 private:
  /// Writes `tables` to `path` through a temporary file beside it, renamed over it.
  static Status write_file(const std::string& path, const std::map<std::string, Table, std::less<>>& tables) {
    const std::string tmp =
        path + ".tmp" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) return Error{ErrorCode::io, "cannot write measurement database '" + tmp + "'"};
      std::string line(detail::kMeasurementDbHeader);
      line += std::to_string(detail::kMeasurementDbVersion);
      line += '\n';
      out.write(line.data(), static_cast<std::streamsize>(line.size()));
      for (const auto& [identity, table] : tables) {
        const std::string escaped_identity = detail::escape_db_field(identity);
        for (const auto& [key, m] : table) {
          line = escaped_identity;
          line += '\t';
          line += detail::escape_db_field(key);
          line += '\t';
          line += detail::format_cost(m.cost);
          line += '\t';
          line += format_double(m.spread);
          line += '\t';
          line += std::to_string(m.samples);
          line += '\n';
          out.write(line.data(), static_cast<std::streamsize>(line.size()));
        }
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
    return Status::success();
  }

  /// Reads one entry line of a file of format `version`.
  Status parse_line(std::string_view line, std::size_t version) {
    const std::size_t expected = version == 1 ? 4 : 5;
    std::vector<std::string_view> fields = split_fields(line, '\t');
    if (!line.empty() && line.back() == '\r' && fields.size() == expected) fields.back().remove_suffix(1);
    if (fields.size() != expected) {
      return Error{ErrorCode::parse,
                   version == 1 ? "expected 4 tab-separated fields (key, cost, spread, samples) in a file without a '" +
                                      std::string(detail::kMeasurementDbHeader) +
                                      std::to_string(detail::kMeasurementDbVersion) + "' header, found " +
                                      std::to_string(fields.size())
                                : "expected 5 tab-separated fields (identity, key, cost, spread, samples), found " +
                                      std::to_string(fields.size())};
    }
    std::optional<std::string> identity =
        version == 1 ? std::optional<std::string>(std::string()) : detail::unescape_db_field(fields[0]);
    if (!identity) return Error{ErrorCode::parse, "malformed escape in identity"};
    const std::string_view* f = fields.data() + (expected - 4);  // key, cost, spread, samples
    std::optional<std::string> key = detail::unescape_db_field(f[0]);
    if (!key) return Error{ErrorCode::parse, "malformed escape in key"};
    std::optional<Cost> cost = detail::parse_cost(f[1]);
    if (!cost) return Error{ErrorCode::parse, "malformed cost '" + std::string(f[1]) + "'"};
    std::optional<double> spread = parse_double(f[2]);
    if (!spread || !(*spread >= 0)) return Error{ErrorCode::parse, "malformed spread '" + std::string(f[2]) + "'"};
    std::optional<std::size_t> samples = parse_index(f[3]);
    if (!samples) return Error{ErrorCode::parse, "malformed sample count '" + std::string(f[3]) + "'"};
    put(*identity, std::move(*key), Measurement{*cost, *spread, *samples});
    return Status::success();
  }

  std::string path_;
  std::map<std::string, Table, std::less<>> tables_;
  /// (identity, key) of the entries erased since the last load or save of the own file: save()
  /// drops them from what it reads back.
  mutable std::set<std::pair<std::string, std::string>> erased_;
  mutable bool dirty_ = false;
};

/// "name@version": the identity under which PersistentOracle keeps the answers of `oracle`, with
/// name the name() of the backend oracle at the bottom of its stack (the wrappers of this library
/// do not change answers) and `version` the user's name for the state of that cost model.
template <class G>
std::string oracle_identity(const CostOracle<G>& oracle, std::string_view version) {
  const CostOracle<G>* backend = &oracle;
  while (backend->wrapped() != nullptr) backend = backend->wrapped();
  std::string identity = backend->name();
  identity += '@';
  identity.append(version.data(), version.size());
  return identity;
}

/// Wraps an oracle and answers from a MeasurementStore (a MeasurementDb, or the user's own), keyed
/// by the oracle's identity
/// (oracle_identity(): its backend's name and a version the user gives) and structural_key();
/// entries of another identity are never served, so a changed cost model (a new version) is asked
/// afresh rather than answered with stale costs. What the database lacks goes to the wrapped
/// oracle (misses of a batch as one batch) and its answer is recorded, with its spread and sample
/// count. Known and Invalid costs are recorded; Unknown answers (e.g. a spent budget) and Errors
/// (which may be passing) are not, so a later run asks again. Entries with an Unknown cost count
/// as absent.
///
/// The store is borrowed and must outlive the oracle; the caller saves it (a MeasurementDb) or it
/// keeps itself (a database). The wrapped oracle
/// is borrowed or owned, as for CachingOracle. Put what else changes the answers (the machine, a
/// wrapper that rescales costs) into the version.
template <class G>
class PersistentOracle final : public detail::OracleWrapper<G> {
 public:
  /// Answers from `db`, else from `inner` (both must outlive this oracle), as
  /// oracle_identity(inner, version).
  PersistentOracle(CostOracle<G>& inner, MeasurementStore& db, std::string_view version)
      : detail::OracleWrapper<G>(inner), db_(&db), identity_(oracle_identity(inner, version)) {}
  /// Answers from `db` (which must outlive this oracle), else from `inner` (owned), as
  /// oracle_identity(inner, version).
  PersistentOracle(std::unique_ptr<CostOracle<G>> inner, MeasurementStore& db, std::string_view version)
      : detail::OracleWrapper<G>(std::move(inner)), db_(&db), identity_(oracle_identity(this->inner(), version)) {}

  /// "persistent(<wrapped oracle>)".
  std::string name() const override { return "persistent(" + this->inner().name() + ")"; }

  /// The identity this oracle's entries are stored under.
  const std::string& identity() const { return identity_; }
  /// The store answers come from.
  const MeasurementStore& db() const { return *db_; }

 private:
  /// Stored measurements from the database; the rest (one per key) from the wrapped oracle in
  /// one batch, stored. Keys are made once per group of structurally equal candidates
  /// (group_by_structure()).
  std::vector<Result<Measurement>> do_measure_batch(const DataflowGraph<G>& graph,
                                                    const std::vector<const Candidate*>& candidates) override {
    this->own_.calls += candidates.size();
    return answer(graph, candidates, true);
  }

  /// Stored measurements from the database, what the wrapped oracle knows for the others.
  std::vector<Result<Measurement>> do_known_batch(const DataflowGraph<G>& graph,
                                                  const std::vector<const Candidate*>& candidates) override {
    return answer(graph, candidates, false);
  }

  /// Stored answers; the first candidate of every other key asked below (ask_below()), its known
  /// costs stored.
  std::vector<Result<Measurement>> answer(const DataflowGraph<G>& graph, const std::vector<const Candidate*>& candidates,
                                          bool measuring) {
    KeyedBatch<Result<Measurement>> batch = split_by_key<Result<Measurement>>(
        graph, candidates, [&](const std::string& key) -> std::optional<Result<Measurement>> {
          std::optional<Measurement> m = db_->find(identity_, key);
          if (!m || m->cost.is_unknown()) return std::nullopt;
          return Result<Measurement>(*m);
        });
    const std::vector<Result<Measurement>> answers = this->ask_below(graph, batch.misses, measuring);
    for (std::size_t m = 0; m < answers.size(); ++m) {
      if (answers[m].ok() && !answers[m]->cost.is_unknown()) {
        db_->put(identity_, std::move(batch.miss_keys[m]), *answers[m]);
      }
    }
    this->own_.db_hits += batch.stored_candidates();
    return batch.per_candidate(answers);
  }

  MeasurementStore* db_;
  std::string identity_;
};

}  // namespace collage
