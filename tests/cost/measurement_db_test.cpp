#include "collage/cost/measurement_db.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <locale>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "collage/cost/budgeted_oracle.hpp"
#include "collage/cost/caching_oracle.hpp"
#include "collage/cost/mock_oracle.hpp"
#include "common/expr_ir.hpp"

namespace collage {
namespace {

namespace fs = std::filesystem;
using testing_ir::Expr;
using testing_ir::ExprGraph;
using Graph = DataflowGraph<ExprGraph>;

/// A fresh directory for one test, removed afterwards.
struct TempDir {
  fs::path dir;
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = fs::temp_directory_path() /
          ("collage_" + std::string(info->name()) + "_" +
           std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string file(const std::string& name) const { return (dir / name).string(); }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

void expect_same(const Measurement& a, const Measurement& b) {
  EXPECT_EQ(a.cost, b.cost);
  if (a.cost.is_known()) {
    EXPECT_EQ(a.cost.raw(), b.cost.raw());
  }
  EXPECT_EQ(a.spread, b.spread);
  EXPECT_EQ(a.samples, b.samples);
}

TEST(MeasurementDb, MissingFileIsAnEmptyDatabase) {
  TempDir tmp;
  Result<MeasurementDb> db = MeasurementDb::load(tmp.file("absent.tsv"));
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_TRUE(db->empty());
  EXPECT_EQ(db->path(), tmp.file("absent.tsv"));
  EXPECT_FALSE(db->find("m@1", "anything").has_value());
}

TEST(MeasurementDb, AnyIdentityKeyAndValueRoundTrips) {
  TempDir tmp;
  struct Entry {
    std::string identity;
    std::string key;
    Measurement m;
  };
  std::vector<Entry> entries;
  for (int b = 0; b < 256; ++b) {
    entries.push_back({"m@1", std::string(1, static_cast<char>(b)), Measurement{Cost::value(b * 0.1), 0.0, 1}});
    entries.push_back({std::string(1, static_cast<char>(b)), "k", Measurement{Cost::value(b), 0.5, 2}});
  }
  entries.push_back({"m@1", "", Measurement{Cost::value(1e-300), 0.123456789012345678, 5}});
  entries.push_back({"", "legacy", Measurement{Cost::value(4), 0.0, 1}});
  entries.push_back({"m@1", "tab\there\nnewline\r\\x41\\\\", Measurement{Cost::value(0.1 + 0.2), 1e-17, 7}});
  entries.push_back({"#id", "#not a comment", Measurement{Cost::unknown(), 0.5, 0}});
  entries.push_back({"m@1", "\\\\\\", Measurement{Cost::invalid(), 0.0, 3}});
  entries.push_back({"m@1", std::string("nul\0inside", 10), Measurement{Cost::value(123456789.125), 2.5, 100}});
  entries.push_back({"m@\xc3\xa9", "\xc3\xa9t\xc3\xa9 \xff\xfe",
                     Measurement{Cost::zero(), 0.0, 18446744073709551615ull}});
  entries.push_back(
      {"m@1", std::string(5000, 'k'), Measurement{Cost::value(std::numeric_limits<double>::max()), 0, 1}});
  entries.push_back({"timer@1", "zero median", Measurement{Cost::zero(), std::numeric_limits<double>::infinity(), 4}});
  MeasurementDb db(tmp.file("db.tsv"));
  for (const Entry& e : entries) db.put(e.identity, e.key, e.m);
  EXPECT_TRUE(db.dirty());
  EXPECT_EQ(db.size(), entries.size());
  ASSERT_TRUE(db.save().ok());
  EXPECT_FALSE(db.dirty());

  Result<MeasurementDb> loaded = MeasurementDb::load(tmp.file("db.tsv"));
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->size(), entries.size());
  for (const Entry& e : entries) {
    std::optional<Measurement> got = loaded->find(e.identity, e.key);
    ASSERT_TRUE(got.has_value()) << "identity of " << e.identity.size() << " bytes, key of " << e.key.size()
                                 << " bytes";
    expect_same(*got, e.m);
  }
  EXPECT_FALSE(loaded->find("m@2", "k").has_value());
  // Each entry is one line: a header plus one line per entry.
  const std::string text = read_all(tmp.file("db.tsv"));
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), entries.size() + 1);
}

TEST(MeasurementDb, FileIsSortedAndIndependentOfInsertionOrder) {
  TempDir tmp;
  MeasurementDb a(tmp.file("a.tsv"));
  MeasurementDb b(tmp.file("b.tsv"));
  a.put("tvm@2", "zebra", Measurement{Cost::value(3), 0.1, 4});
  a.put("tvm@2", "apple", Measurement{Cost::value(1), 0.0, 1});
  a.put("cuda@1", "mango", Measurement{Cost::invalid(), 0.0, 1});
  b.put("cuda@1", "mango", Measurement{Cost::invalid(), 0.0, 1});
  b.put("tvm@2", "apple", Measurement{Cost::value(99), 0.0, 1});
  b.put("tvm@2", "zebra", Measurement{Cost::value(3), 0.1, 4});
  b.put("tvm@2", "apple", Measurement{Cost::value(1), 0.0, 1});  // replaces
  ASSERT_TRUE(a.save().ok());
  ASSERT_TRUE(b.save().ok());
  const std::string text = read_all(tmp.file("a.tsv"));
  EXPECT_EQ(text, read_all(tmp.file("b.tsv")));
  EXPECT_EQ(text,
            "# collage measurements v2\n"
            "cuda@1\tmango\tinvalid\t0\t1\n"
            "tvm@2\tapple\t1\t0\t1\n"
            "tvm@2\tzebra\t3\t0.1\t4\n");
  // Saving again rewrites the same bytes, and leaves no temporary file behind (only the lock
  // files, which stay so that every saver locks the same file).
  ASSERT_TRUE(a.save().ok());
  EXPECT_EQ(read_all(tmp.file("a.tsv")), text);
  EXPECT_EQ(tmp.listing(), (std::vector<std::string>{"a.tsv", "a.tsv.lock", "b.tsv", "b.tsv.lock"}));
}

/// Sets the C library's and the C++ global locale to `name` for its lifetime; `ok` says whether
/// the machine has that locale.
class ScopedLocale {
 public:
  explicit ScopedLocale(const char* name) : c_locale_(std::setlocale(LC_ALL, nullptr)) {
    if (std::setlocale(LC_ALL, name) == nullptr) return;
#if defined(__cpp_exceptions)
    try {
      previous_ = std::locale::global(std::locale(name));
      ok = true;
    } catch (const std::runtime_error&) {
      std::setlocale(LC_ALL, c_locale_.c_str());
    }
#endif
  }
  ~ScopedLocale() {
    if (ok) std::locale::global(previous_);
    std::setlocale(LC_ALL, c_locale_.c_str());
  }
  ScopedLocale(const ScopedLocale&) = delete;
  ScopedLocale& operator=(const ScopedLocale&) = delete;
  bool ok = false;

 private:
  std::string c_locale_;
  std::locale previous_;
};

TEST(MeasurementDb, TheSameBytesUnderEveryLocale) {
  TempDir tmp;
  MeasurementDb db;
  db.put("tvm@1", "k", Measurement{Cost::value(2.5), 0.25, 1234567});
  db.put("tvm@1", "small", Measurement{Cost::value(1e-7), 1.0 / 3.0, 1000});
  ASSERT_TRUE(db.save_as(tmp.file("c.tsv")).ok());
  {
    ScopedLocale german("de_DE.UTF-8");
    if (!german.ok) GTEST_SKIP() << "no de_DE.UTF-8 locale installed (scripts/install-deps.sh generates it)";
    ASSERT_EQ(std::use_facet<std::numpunct<char>>(std::locale()).decimal_point(), ',');
    ASSERT_TRUE(db.save_as(tmp.file("de.tsv")).ok());
    // A file written under the C locale loads under the German one.
    Result<MeasurementDb> from_c = MeasurementDb::load(tmp.file("c.tsv"));
    ASSERT_TRUE(from_c.ok()) << from_c.error().message;
    expect_same(*from_c->find("tvm@1", "k"), *db.find("tvm@1", "k"));
    expect_same(*from_c->find("tvm@1", "small"), *db.find("tvm@1", "small"));
  }
  EXPECT_EQ(read_all(tmp.file("de.tsv")), read_all(tmp.file("c.tsv")));
  // And one written under the German locale loads under the C locale.
  Result<MeasurementDb> from_de = MeasurementDb::load(tmp.file("de.tsv"));
  ASSERT_TRUE(from_de.ok()) << from_de.error().message;
  expect_same(*from_de->find("tvm@1", "k"), *db.find("tvm@1", "k"));
}

TEST(MeasurementDb, AFileOfTheFirstFormatLoadsUnderTheEmptyIdentity) {
  TempDir tmp;
  const std::string path = tmp.file("v1.tsv");
  write_all(path, "# collage measurements v1\nk\t0.10000000000000001\t0\t3\ngpu0/k\tinvalid\t0.5\t1\n");
  Result<MeasurementDb> db = MeasurementDb::load(path);
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_EQ(db->size(), 2u);
  expect_same(*db->find("", "k"), Measurement{Cost::value(0.1), 0.0, 3});
  EXPECT_TRUE(db->find("", "gpu0/k")->cost.is_invalid());
  EXPECT_FALSE(db->dirty());
  // Saved, it is a file of the current format with the entries kept.
  ASSERT_TRUE(db->save().ok());
  EXPECT_EQ(read_all(path), "# collage measurements v2\n\tgpu0/k\tinvalid\t0.5\t1\n\tk\t0.1\t0\t3\n");
  // Handed to the cost model that measured them, they are served as its own; its own entries win.
  db->put("mock@1", "gpu0/k", Measurement{Cost::value(2), 0.0, 1});
  EXPECT_EQ(db->move_identity("", "mock@1"), 2u);
  EXPECT_EQ(db->size(), 2u);
  EXPECT_FALSE(db->find("", "k").has_value());
  expect_same(*db->find("mock@1", "k"), Measurement{Cost::value(0.1), 0.0, 3});
  EXPECT_EQ(db->find("mock@1", "gpu0/k")->cost, Cost::value(2));
  EXPECT_EQ(db->move_identity("", "mock@1"), 0u);

  // Without a header, a file is of the first format too.
  write_all(path, "k\t1\t0\t1\n");
  Result<MeasurementDb> bare = MeasurementDb::load(path);
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_TRUE(bare->find("", "k").has_value());
}

TEST(MeasurementDb, AnUnknownFormatIsRejectedNamingIt) {
  TempDir tmp;
  const std::string path = tmp.file("future.tsv");
  for (const char* header : {"# collage measurements v3", "# collage measurements v0", "# collage measurements vX"}) {
    write_all(path, std::string(header) + "\nm@1\tk\t1\t0\t1\n");
    Result<MeasurementDb> db = MeasurementDb::load(path);
    ASSERT_FALSE(db.ok()) << header;
    EXPECT_EQ(db.error().code, ErrorCode::parse);
    EXPECT_EQ(db.error().message, path + ":1: unknown measurement database format '" + header +
                                      "' (this version of collage reads v1 and v2)");
  }
  // A current line in a file without the header says what is missing.
  write_all(path, "m@1\tk\t1\t0\t1\n");
  Result<MeasurementDb> headless = MeasurementDb::load(path);
  ASSERT_FALSE(headless.ok());
  EXPECT_NE(headless.error().message.find("without a '# collage measurements v2' header, found 5"), std::string::npos)
      << headless.error().message;
}

TEST(MeasurementDb, MalformedLinesNameTheFileAndLine) {
  TempDir tmp;
  const std::vector<std::string> bad_lines = {
      "i\tonly\ttwo",                 // too few fields
      "i\tk\t1\t0\t1\textra",         // too many fields
      "i\tk\tfast\t0\t1",             // cost not a number
      "i\tk\t-1\t0\t1",               // negative cost
      "i\tk\tnan\t0\t1",              // cost not a number
      "i\tk\tinf\t0\t1",              // Invalid is spelt "invalid"
      "i\tk\t1,5\t0\t1",              // a decimal comma
      "i\tk\t1\t-0.5\t1",             // negative spread
      "i\tk\t1\tnan\t1",              // spread not a number
      "i\tk\t1\t0\tmany",             // samples not a count
      "i\tk\t1\t0\t-3",               // negative samples
      "i\tk\t1\t0\t1.234",            // grouped samples
      "i\tk\t1 \t0\t1",               // trailing garbage
      "i\tbad\\q escape\t1\t0\t1",    // unknown escape
      "i\tbad\\x4 escape\t1\t0\t1",   // short hex escape
      "i\ttrailing backslash\\\t1\t0\t1",
      "bad\\q identity\tk\t1\t0\t1",
  };
  for (const std::string& bad : bad_lines) {
    const std::string path = tmp.file("bad.tsv");
    write_all(path, "# collage measurements v2\n\ni\tgood\t1\t0\t1\n" + bad + "\ni\tlater\t2\t0\t1\n");
    Result<MeasurementDb> db = MeasurementDb::load(path);
    ASSERT_FALSE(db.ok()) << bad;
    EXPECT_EQ(db.error().code, ErrorCode::parse);
    EXPECT_EQ(db.error().message.rfind(path + ":4: ", 0), 0u) << db.error().message;
  }
}

TEST(MeasurementDb, CommentsBlankLinesCrlfAndDuplicates) {
  TempDir tmp;
  const std::string path = tmp.file("hand.tsv");
  write_all(path,
            "# collage measurements v2\r\n# hand edited\n\nm@1\tk\t1\t0\t1\r\n# another comment\nm@1\tk\t2.5\t0.25\t8\n"
            "\\x23m@1\t\\x23k\t7\t0\t1\n");
  Result<MeasurementDb> db = MeasurementDb::load(path);
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_EQ(db->size(), 2u);
  expect_same(*db->find("m@1", "k"), Measurement{Cost::value(2.5), 0.25, 8});  // the later line wins
  expect_same(*db->find("#m@1", "#k"), Measurement{Cost::value(7), 0.0, 1});
  EXPECT_FALSE(db->dirty());
}

TEST(MeasurementDb, SaveReportsFailureAsAStatus) {
  TempDir tmp;
  MeasurementDb nowhere;
  nowhere.put("m@1", "k", Measurement{Cost::value(1), 0, 1});
  Status no_path = nowhere.save();
  EXPECT_FALSE(no_path.ok());
  EXPECT_FALSE(no_path.message().empty());
  MeasurementDb missing_dir(tmp.file("no/such/dir/db.tsv"));
  missing_dir.put("m@1", "k", Measurement{Cost::value(1), 0, 1});
  Status s = missing_dir.save();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no/such/dir"), std::string::npos) << s.message();
  EXPECT_TRUE(missing_dir.dirty());
  EXPECT_TRUE(nowhere.save_as(tmp.file("elsewhere.tsv")).ok());
  EXPECT_EQ(MeasurementDb::load(tmp.file("elsewhere.tsv"))->size(), 1u);
}

TEST(MeasurementDb, EraseAndFind) {
  MeasurementDb db;
  db.put("m@1", "a", Measurement{Cost::value(1), 0, 1});
  db.put("m@2", "a", Measurement{Cost::value(2), 0, 1});
  EXPECT_TRUE(db.find("m@1", "a").has_value());
  EXPECT_TRUE(db.erase("m@1", "a"));
  EXPECT_FALSE(db.erase("m@1", "a"));
  EXPECT_FALSE(db.erase("m@3", "a"));
  EXPECT_FALSE(db.find("m@1", "a").has_value());
  EXPECT_EQ(db.find("m@2", "a")->cost, Cost::value(2));
  EXPECT_EQ(db.entries().size(), 1u);  // no empty identity is left behind
  EXPECT_TRUE(db.erase("m@2", "a"));
  EXPECT_TRUE(db.empty());
}

// ---------------------------------------------------------------------------------------------
// PersistentOracle

/// Twelve identical layers (dense -> bias_add -> relu, residual add) and per-layer candidates.
struct Layers {
  ExprGraph ir;
  std::optional<Graph> graph;
  std::vector<Candidate> candidates;  // per layer: the block on cutlass, the relu on tvm
  std::vector<const Expr*> norms;

  Layers() {
    const Expr* h = ir.var("x");
    std::vector<std::vector<const Expr*>> blocks;
    for (int l = 0; l < 12; ++l) {
      norms.push_back(ir.call("layer_norm", {h}));
      const Expr* d = ir.call("dense", {norms.back(), ir.constant("w")});
      const Expr* b = ir.call("bias_add", {d, ir.constant("b")});
      const Expr* r = ir.call("relu", {b});
      h = ir.call("add", {r, h});
      blocks.push_back({d, b, r});
    }
    ir.output(h);
    auto built = Graph::build(ir);
    EXPECT_TRUE(built.ok());
    graph.emplace(std::move(built).value());
    for (const auto& block : blocks) {
      candidates.push_back(candidate(block, "cutlass"));
      candidates.push_back(candidate({block[2]}, "tvm"));
    }
  }
  Candidate candidate(const std::vector<const Expr*>& nodes, const std::string& target) const {
    IndexSet s(graph->size());
    for (const Expr* e : nodes) s.add(graph->index_of(e));
    return Candidate{SubGraph(*graph, s), target, "rule"};
  }
  std::vector<const Candidate*> pointers() const {
    std::vector<const Candidate*> out;
    for (const Candidate& c : candidates) out.push_back(&c);
    return out;
  }
};

TEST(PersistentOracle, SecondRunMakesNoOracleCalls) {
  TempDir tmp;
  const std::string path = tmp.file("measurements.tsv");
  Layers f;
  std::vector<Result<Cost>> first;
  {
    Result<MeasurementDb> db = MeasurementDb::load(path);
    ASSERT_TRUE(db.ok());
    MockOracle<ExprGraph> mock({{"cutlass", 0.5}, {"tvm", 1.0}});
    PersistentOracle<ExprGraph> oracle(mock, *db, "1");
    first = oracle.estimate_batch(*f.graph, f.pointers());
    EXPECT_EQ(mock.calls(), 2u);  // one per distinct key, in one batch
    EXPECT_EQ(oracle.stats().db_hits, 0u);
    EXPECT_EQ(db->size(), 2u);
    ASSERT_TRUE(db->save().ok());
  }
  {
    Result<MeasurementDb> db = MeasurementDb::load(path);
    ASSERT_TRUE(db.ok()) << db.error().message;
    MockOracle<ExprGraph> mock({{"cutlass", 0.5}, {"tvm", 1.0}});
    PersistentOracle<ExprGraph> oracle(mock, *db, "1");
    std::vector<Result<Cost>> second = oracle.estimate_batch(*f.graph, f.pointers());
    ASSERT_EQ(second.size(), first.size());
    for (std::size_t k = 0; k < first.size(); ++k) EXPECT_EQ(*second[k], *first[k]) << k;
    SafeEstimate single = safe_estimate(oracle, *f.graph, f.candidates[4]);
    EXPECT_EQ(single.cost, *first[4]);
    EXPECT_EQ(mock.calls(), 0u);
    OracleStats s = oracle.stats();
    EXPECT_EQ(s.db_hits, f.candidates.size() + 1);
    EXPECT_EQ(s.backend_calls, 0u);
    EXPECT_FALSE(db->dirty());
  }
}

TEST(PersistentOracle, RecordsTheSpreadOfAMeasuringOracle) {
  Layers f;
  MeasurementDb db;
  auto meter = make_oracle<ExprGraph>("meter", [](const Graph&, const Candidate& c, const ExtractedFunction&) {
    return make_measurement(c.target == "tvm" ? 2.0 : 1.0, 0.04, 25);
  });
  PersistentOracle<ExprGraph> oracle(*meter, db, "gpu0");
  EXPECT_EQ(oracle.identity(), "meter@gpu0");
  EXPECT_EQ(*oracle.estimate(*f.graph, f.candidates[1]), Cost::value(2));
  std::optional<Measurement> m = db.find("meter@gpu0", structural_key(*f.graph, f.candidates[1]));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->cost, Cost::value(2));
  EXPECT_EQ(m->spread, 0.04);
  EXPECT_EQ(m->samples, 25u);

  MeasurementDb plain_db;
  MockOracle<ExprGraph> mock({{"tvm", 1.0}});
  PersistentOracle<ExprGraph> plain(mock, plain_db, "1");
  (void)safe_estimate(plain, *f.graph, f.candidates[1]);
  std::optional<Measurement> p = plain_db.find("mock@1", structural_key(*f.graph, f.candidates[1]));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->spread, 0.0);
  EXPECT_EQ(p->samples, 1u);
}

TEST(PersistentOracle, ServesOnlyTheEntriesOfItsOwnOracleAndVersion) {
  Layers f;
  MeasurementDb db;
  MockOracle<ExprGraph> mock({{"tvm", 1.0}});
  PersistentOracle<ExprGraph> first(mock, db, "1");
  EXPECT_EQ(first.identity(), "mock@1");
  EXPECT_EQ(safe_estimate(first, *f.graph, f.candidates[1]).cost, Cost::value(1));
  EXPECT_EQ(mock.calls(), 1u);
  // The same oracle and version is served from the database ...
  PersistentOracle<ExprGraph> again(mock, db, "1");
  EXPECT_EQ(safe_estimate(again, *f.graph, f.candidates[1]).cost, Cost::value(1));
  EXPECT_EQ(mock.calls(), 1u);
  EXPECT_EQ(again.stats().db_hits, 1u);
  // ... a new version of the cost model is asked afresh ...
  mock.set_cost("tvm", 3.0);
  PersistentOracle<ExprGraph> changed(mock, db, "2");
  EXPECT_EQ(safe_estimate(changed, *f.graph, f.candidates[1]).cost, Cost::value(3));
  EXPECT_EQ(mock.calls(), 2u);
  // ... and so is another oracle.
  auto other =
      make_oracle<ExprGraph>("other", [](const Graph&, const Candidate&, const ExtractedFunction&) { return 5.0; });
  PersistentOracle<ExprGraph> stranger(*other, db, "1");
  EXPECT_EQ(safe_estimate(stranger, *f.graph, f.candidates[1]).cost, Cost::value(5));
  EXPECT_EQ(stranger.stats().db_hits, 0u);
  EXPECT_EQ(db.entries().size(), 3u);  // mock@1, mock@2, other@1
  // The identity names the backend, whatever wraps it.
  BudgetedOracle<ExprGraph> budgeted(mock, OracleBudget{});
  PersistentOracle<ExprGraph> wrapped(budgeted, db, "2");
  EXPECT_EQ(wrapped.identity(), "mock@2");
  EXPECT_EQ(safe_estimate(wrapped, *f.graph, f.candidates[1]).cost, Cost::value(3));
  EXPECT_EQ(mock.calls(), 2u);
}

TEST(PersistentOracle, ABudgetSpentAboveItStillServesTheDatabase) {
  Layers f;
  MeasurementDb db;
  MockOracle<ExprGraph> mock({{"tvm", 1.0}, {"cutlass", 2.0}});
  PersistentOracle<ExprGraph> persistent(mock, db, "1");
  EXPECT_EQ(safe_estimate(persistent, *f.graph, f.candidates[1]).cost, Cost::value(1));  // the relu, stored
  BudgetedOracle<ExprGraph> budgeted(persistent, OracleBudget{1, 0});
  budgeted.set_chunk_size(1);
  const Candidate norm = f.candidate({f.norms[0]}, "tvm");
  // The block is measured (the one call allowed); the relu and the next layer's block come from
  // the database; the layer norm was never measured and is refused.
  std::vector<SafeEstimate> out =
      safe_estimate_batch(budgeted, *f.graph, {&f.candidates[0], &f.candidates[1], &f.candidates[2], &norm});
  EXPECT_TRUE(out[0].cost.is_known());
  EXPECT_EQ(out[1].cost, Cost::value(1));
  EXPECT_EQ(out[2].cost, out[0].cost);
  EXPECT_TRUE(out[3].cost.is_unknown());
  EXPECT_EQ(mock.calls(), 2u);
  EXPECT_EQ(budgeted.stats().budget_refusals, 1u);
  EXPECT_EQ(budgeted.stats().db_hits, 2u);
}

/// A store of the user's own: counts its lookups and writes.
class CountingStore final : public MeasurementStore {
 public:
  std::optional<Measurement> find(std::string_view identity, std::string_view key) const override {
    ++finds;
    auto it = entries.find(std::string(identity) + "\n" + std::string(key));
    if (it == entries.end()) return std::nullopt;
    return it->second;
  }
  void put(std::string_view identity, std::string key, Measurement m) override {
    ++puts;
    entries[std::string(identity) + "\n" + key] = m;
  }
  mutable std::size_t finds = 0;
  std::size_t puts = 0;
  std::map<std::string, Measurement> entries;
};

TEST(PersistentOracle, WorksOverAStoreOfTheUsersOwn) {
  Layers f;
  CountingStore store;
  MockOracle<ExprGraph> mock({{"tvm", 1.0}, {"cutlass", 0.5}});
  std::vector<const Candidate*> all;
  for (const Candidate& c : f.candidates) all.push_back(&c);
  std::vector<SafeEstimate> first_costs;
  {
    PersistentOracle<ExprGraph> first(mock, store, "1");
    first_costs = safe_estimate_batch(first, *f.graph, all);
  }
  // Twelve identical layers: two structures, measured and stored once each.
  EXPECT_EQ(store.puts, 2u);
  EXPECT_EQ(mock.calls(), 2u);
  PersistentOracle<ExprGraph> second(mock, store, "1");
  std::vector<SafeEstimate> again = safe_estimate_batch(second, *f.graph, all);
  for (std::size_t k = 0; k < all.size(); ++k) EXPECT_EQ(again[k].cost, first_costs[k].cost);
  EXPECT_EQ(mock.calls(), 2u);
  EXPECT_EQ(second.stats().db_hits, all.size());
}

TEST(PersistentOracle, UnknownAndErrorsAreNotRecordedButInvalidIs) {
  Layers f;
  MeasurementDb db;
  std::size_t calls = 0;
  auto oracle_fn = make_oracle<ExprGraph>("mixed", [&](const Graph&, const Candidate& c, const ExtractedFunction& v) {
    ++calls;
    if (c.target == "tvm") return Result<Cost>(Cost::unknown());
    if (v.body.size() == 3) return Result<Cost>(Error{ErrorCode::oracle, "flaky device"});
    return Result<Cost>(Cost::invalid());
  });
  PersistentOracle<ExprGraph> oracle(std::move(oracle_fn), db, "1");
  Candidate norm = f.candidate({f.norms[3]}, "cutlass");
  std::vector<SafeEstimate> out = safe_estimate_batch(oracle, *f.graph, {&f.candidates[0], &f.candidates[1], &norm});
  EXPECT_TRUE(out[0].failed());
  EXPECT_TRUE(out[1].cost.is_unknown());
  EXPECT_TRUE(out[2].cost.is_invalid());
  EXPECT_FALSE(out[2].failed());
  EXPECT_EQ(db.size(), 1u);
  EXPECT_TRUE(db.find("mixed@1", structural_key(*f.graph, norm)).has_value());
  EXPECT_EQ(oracle.stats().errors, 1u);
  // Asked again, only the Invalid one comes from the database.
  calls = 0;
  std::vector<SafeEstimate> again = safe_estimate_batch(oracle, *f.graph, {&f.candidates[0], &f.candidates[1], &norm});
  EXPECT_EQ(calls, 2u);
  EXPECT_EQ(oracle.stats().db_hits, 1u);
  EXPECT_EQ(oracle.name(), "persistent(mixed)");
}

TEST(PersistentOracle, UnknownEntriesCountAsAbsent) {
  Layers f;
  MeasurementDb db;
  db.put("mock@1", structural_key(*f.graph, f.candidates[1]), Measurement{Cost::unknown(), 0, 0});
  MockOracle<ExprGraph> mock({{"tvm", 1.0}});
  PersistentOracle<ExprGraph> oracle(mock, db, "1");
  EXPECT_EQ(safe_estimate(oracle, *f.graph, f.candidates[1]).cost, Cost::value(1));
  EXPECT_EQ(mock.calls(), 1u);
  EXPECT_EQ(db.find("mock@1", structural_key(*f.graph, f.candidates[1]))->cost, Cost::value(1));
}

TEST(PersistentOracle, UnderACacheTheDatabaseIsAskedOncePerKey) {
  Layers f;
  MeasurementDb db;
  MockOracle<ExprGraph> mock({{"cutlass", 0.5}, {"tvm", 1.0}});
  PersistentOracle<ExprGraph> persistent(mock, db, "1");
  CachingOracle<ExprGraph> cache(persistent);
  std::vector<Result<Cost>> costs = cache.estimate_batch(*f.graph, f.pointers());
  EXPECT_EQ(*costs[0], Cost::value(0.5 + 0.5 * 0.9 + 0.5 * 0.81));
  OracleStats s = cache.stats();
  EXPECT_EQ(s.calls, 24u);
  EXPECT_EQ(s.cache_misses, 2u);
  EXPECT_EQ(s.cache_hits, 22u);
  EXPECT_EQ(s.db_hits, 0u);
  EXPECT_EQ(s.backend_calls, 2u);
  EXPECT_EQ(cache.name(), "caching(persistent(mock))");
}

TEST(MeasurementDb, TwoSaversOfOneFileLoseNoEntry) {
  // Two databases (two processes, say) loaded from one file, each with entries of its own, save
  // in turn and at once: the file ends with every entry of both, and the later save wins where
  // both have a key.
  TempDir tmp;
  const std::string path = tmp.file("shared.tsv");
  Result<MeasurementDb> a = MeasurementDb::load(path);
  Result<MeasurementDb> b = MeasurementDb::load(path);
  ASSERT_TRUE(a.ok() && b.ok());
  a->put("m@1", "a", Measurement{Cost::value(1), 0, 1});
  a->put("m@1", "both", Measurement{Cost::value(2), 0, 1});
  b->put("m@1", "b", Measurement{Cost::value(3), 0, 1});
  b->put("m@1", "both", Measurement{Cost::value(4), 0, 1});
  ASSERT_TRUE(a->save().ok());
  ASSERT_TRUE(b->save().ok());
  Result<MeasurementDb> merged = MeasurementDb::load(path);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->size(), 3u);
  EXPECT_EQ(merged->find("m@1", "a")->cost, Cost::value(1));
  EXPECT_EQ(merged->find("m@1", "b")->cost, Cost::value(3));
  EXPECT_EQ(merged->find("m@1", "both")->cost, Cost::value(4));

  // An entry erased (or moved to another identity) before a save stays erased.
  ASSERT_TRUE(a->erase("m@1", "a"));
  ASSERT_TRUE(a->save().ok());
  merged = MeasurementDb::load(path);
  ASSERT_TRUE(merged.ok());
  EXPECT_FALSE(merged->find("m@1", "a").has_value());
  EXPECT_TRUE(merged->find("m@1", "b").has_value());

  // At once: threads, each with its own database and entries, saving after every put.
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads, Status::success());
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&path, &failures, t] {
      MeasurementDb db(path);
      for (int k = 0; k < kEach; ++k) {
        db.put("t@" + std::to_string(t), std::to_string(k), Measurement{Cost::value(k), 0, 1});
        Status s = db.save();
        if (!s.ok()) failures[static_cast<std::size_t>(t)] = s;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : failures) EXPECT_TRUE(s.ok()) << s.message();
  merged = MeasurementDb::load(path);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->size(), 2u + kThreads * kEach);
  for (int t = 0; t < kThreads; ++t) {
    for (int k = 0; k < kEach; ++k) {
      EXPECT_TRUE(merged->find("t@" + std::to_string(t), std::to_string(k)).has_value()) << t << " " << k;
    }
  }
}

}  // namespace
}  // namespace collage
