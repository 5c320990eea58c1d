// docs/guide.md, "Cost oracles": a function oracle, a measuring oracle (time_run, measure_each),
// CachingOracle, BudgetedOracle, and the measurement database (MeasurementDb, PersistentOracle,
// a MeasurementStore of one's own). Usage: collage_guide_oracles_and_db DATABASE_FILE (removed
// first, so that the program starts from an empty database).
#include "net_ir.hpp"

#include <collage/collage.hpp>

#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// [function]
// A cost model as a function of the candidate and its extracted function: 1 per operator on
// "native", 0.4 per operator on "blas". blas cannot run relu: +inf is Invalid, and the search
// drops the candidate as if no rule had proposed it.
double model_cost(const Graph& graph, const collage::Candidate& c, const collage::ExtractedFunction& fn) {
  double ops = 0;
  for (std::size_t i : fn.body) {
    if (!graph.needs_kernel(i)) continue;
    if (c.target == "blas" && graph.op_name(i) == "relu") return std::numeric_limits<double>::infinity();
    ops += 1;
  }
  return (c.target == "blas" ? 0.4 : 1.0) * ops;
}
// [function]

// [measuring]
// An oracle that runs something per candidate and times it. Real ones compile the extracted
// function for the candidate's target and time the kernel; this one times a loop whose length
// grows with the function's size.
class TimingOracle final : public collage::CostOracle<Net> {
 public:
  std::string name() const override { return "loop-timer"; }

 private:
  std::vector<collage::Result<collage::Measurement>> do_measure_batch(
      const Graph& graph, const std::vector<const collage::Candidate*>& candidates) override {
    collage::TimingOptions timing;
    timing.warmups = 1;
    timing.min_repeats = 3;
    timing.max_repeats = 10;
    timing.max_seconds = 0.05;
    return collage::measure_each(graph, candidates,
                                 [&](const Graph&, const collage::Candidate&, const collage::ExtractedFunction& fn) {
                                   const std::size_t n = 2000 * fn.body.size();
                                   return collage::time_run([&] { sink_ = sink_ + spin(n); }, timing);
                                 });
  }
  static double spin(std::size_t n) {
    double acc = 0;
    for (std::size_t k = 0; k < n; ++k) acc += static_cast<double>(k % 7);
    return acc;
  }
  volatile double sink_ = 0;
};
// [measuring]

// [store]
// A MeasurementStore of one's own (a real one would be a database shared by several processes).
class MapStore final : public collage::MeasurementStore {
 public:
  std::optional<collage::Measurement> find(std::string_view identity, std::string_view key) const override {
    auto it = entries_.find(std::string(identity) + '\n' + std::string(key));
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  void put(std::string_view identity, std::string key, collage::Measurement m) override {
    entries_[std::string(identity) + '\n' + key] = m;
  }
  std::size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, collage::Measurement> entries_;
};
// [store]

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: %s DATABASE_FILE\n", argv[0]), 2;
  const std::string db_path = argv[1];
  std::remove(db_path.c_str());

  const Net net = two_dense_layers();
  auto graph = Graph::build(net);
  if (!graph) return std::fprintf(stderr, "%s\n", graph.error().message.c_str()), 1;
  auto is_op = [](const Graph& g, std::size_t i) { return g.needs_kernel(i); };
  std::vector<collage::PartitionSpec<Net>> specs = {
      collage::native_fusion_spec<Net>("native", 3),
      {"blas", collage::op_predicate_byoc_rule<Net>("blas", is_op, 2)}};

  // [make_oracle]
  auto model = collage::make_oracle<Net>("model", model_cost);
  auto result = collage::partition(*graph, specs, *model);
  if (!result) return std::fprintf(stderr, "%s\n", result.error().message.c_str()), 1;
  std::printf("total %s; %zu oracle calls, %zu cache hits\n", result->partitioning.total.to_string().c_str(),
              result->oracle.backend_calls, result->oracle.cache_hits);
  // [make_oracle]
  check(result->partitioning.total == collage::Cost::value(3.6), "blas dense+add twice (0.8 each), relu twice (1 each)");
  check(result->oracle.cache_hits > 0, "the second layer's candidates come from the cache");
  check(result->oracle_errors.empty(), "Invalid is an answer, not a failure");

  // Measuring: the answers are seconds, with their spread and number of samples.
  {
    TimingOracle timer;
    auto measured = collage::partition(*graph, specs, timer);
    check(measured.ok() && measured->partitioning.total.is_known(), "a partitioning by measured time");
    collage::Candidate one{collage::SubGraph(*graph, collage::IndexSet(graph->size(), {2})), "native", "single", {}};
    collage::Result<collage::Measurement> m = timer.measure(*graph, one);
    check(m.ok() && m->cost.raw() > 0 && m->samples >= 1 && m->spread >= 0, "a measurement");
    if (m) std::printf("dense alone: %zu samples, spread %.2f\n", m->samples, m->spread);
  }

  // [caching]
  {
    collage::CachingOracle<Net> cache(*model);  // borrows the model
    collage::Candidate dense{collage::SubGraph(*graph, collage::IndexSet(graph->size(), {2})), "blas", "single", {}};
    collage::Result<collage::Cost> first = cache.estimate(*graph, dense);
    collage::Result<collage::Cost> again = cache.estimate(*graph, dense);
    std::printf("%s %s: %zu hit, %zu miss\n", first->to_string().c_str(), again->to_string().c_str(),
                cache.stats().cache_hits, cache.stats().cache_misses);
  // [caching]
    check(first.ok() && again.ok() && *first == *again, "the cached answer is the answer");
    check(cache.stats().cache_hits == 1 && cache.stats().cache_misses == 1, "asked once");
  }

  // [budget]
  {
    collage::OracleBudget budget;
    budget.max_calls = 4;
    collage::BudgetedOracle<Net> budgeted(*model, budget);
    auto limited = collage::partition(*graph, specs, budgeted);
    // The same through partition()'s own option:
    collage::PartitionerOptions options;
    options.budget = budget;
    auto limited_too = collage::partition(*graph, specs, *model, options);
  // [budget]
    check(limited.ok() && budgeted.stats().budget_refusals > 0, "past the budget, answers are Unknown");
    check(limited_too.ok() && limited_too->oracle.backend_calls == 4, "options.budget caps the oracle calls");
    if (limited) std::printf("budgeted total %s\n", limited->partitioning.total.to_string().c_str());
  }

  // [database]
  // First run: every distinct candidate is measured, and the database remembers it.
  {
    auto db = collage::MeasurementDb::load(db_path);  // a missing file is an empty database
    if (!db) return std::fprintf(stderr, "%s\n", db.error().message.c_str()), 1;
    collage::PersistentOracle<Net> persistent(*model, *db, /*version=*/"v1");
    auto first = collage::partition(*graph, specs, persistent);
    collage::Status saved = db->save();
    if (!saved) return std::fprintf(stderr, "%s\n", saved.message().c_str()), 1;
    std::printf("run 1 (%s): %zu measured, %zu from the database\n", persistent.identity().c_str(),
                first->oracle.backend_calls, first->oracle.db_hits);
  }
  // Second run (another process, say): everything comes from the database.
  std::size_t second_measured = 0, second_hits = 0;
  {
    auto db = collage::MeasurementDb::load(db_path);
    if (!db) return std::fprintf(stderr, "%s\n", db.error().message.c_str()), 1;
    collage::PersistentOracle<Net> persistent(*model, *db, "v1");
    auto second = collage::partition(*graph, specs, persistent);
    second_measured = second->oracle.backend_calls;
    second_hits = second->oracle.db_hits;
    std::printf("run 2 (%s): %zu measured, %zu from the database\n", persistent.identity().c_str(),
                second_measured, second_hits);
  }
  // The cost model changed: a new version, so nothing stale is served.
  std::size_t v2_measured = 0;
  {
    auto db = collage::MeasurementDb::load(db_path);
    if (!db) return std::fprintf(stderr, "%s\n", db.error().message.c_str()), 1;
    collage::PersistentOracle<Net> persistent(*model, *db, "v2");
    auto third = collage::partition(*graph, specs, persistent);
    v2_measured = third->oracle.backend_calls;
    std::printf("run 3 (%s): %zu measured, %zu from the database\n", persistent.identity().c_str(),
                v2_measured, third->oracle.db_hits);
  }
  // [database]
  check(second_measured == 0 && second_hits > 0, "the second run measures nothing");
  check(v2_measured > 0, "a new version measures again");

  // A store of one's own behaves the same.
  {
    MapStore store;
    collage::PersistentOracle<Net> persistent(*model, store, "v1");
    auto run = collage::partition(*graph, specs, persistent);
    auto rerun = collage::partition(*graph, specs, persistent);
    // Each result counts its own call: the rerun reached the backend no more.
    check(run.ok() && rerun.ok() && store.size() > 0 && run->oracle.backend_calls > 0 &&
              rerun->oracle.backend_calls == 0 && rerun->oracle.db_hits > 0,
          "MapStore serves a rerun");
    check(persistent.identity() == "model@v1", "identity: backend name @ version");
  }

  if (failures != 0) return 1;
  std::puts("guide oracles_and_db: all checks passed");
  return 0;
}
